//! A `KubeSchedulerConfiguration` rejected after decoding (validation, unknown plugins, plugin args)
//! is reported at the line of the field the error names, in the scenario file or in the
//! `--scheduler-config` file, through the public `run_file`. Every expected line number is counted
//! by hand from the YAML in the test (written one line per string piece, with its number).

use std::path::PathBuf;

use k8s_cluster::{run_file, RunOptions};

/// Writes `text` to a fresh file and returns its path.
fn write(text: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("k8s-mini-config-lines-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(format!("case-{}.yaml", N.fetch_add(1, Ordering::SeqCst)));
    std::fs::write(&path, text).expect("write");
    path
}

/// The error `run_file` gives for `text`, with the file name replaced by `F`.
fn error(text: &str, opts: &RunOptions) -> String {
    let path = write(text);
    let e = run_file(&path, opts)
        .expect_err("the configuration is rejected")
        .to_string();
    e.replace(&path.display().to_string(), "F")
}

/// Lines 1-5: a Node, then the separator.
const NODE: &str = concat!(
    "apiVersion: v1\n",                              // 1
    "kind: Node\n",                                  // 2
    "metadata: {name: n1}\n",                        // 3
    "status: {capacity: {cpu: '4', memory: 8Gi}}\n", // 4
    "---\n",                                         // 5
);

/// Lines 6-10 of a scenario file that starts with [`NODE`].
const HEAD: &str = concat!(
    "# the scheduler's configuration\n",            // 6
    "apiVersion: kubescheduler.config.k8s.io/v1\n", // 7
    "kind: KubeSchedulerConfiguration\n",           // 8
    "profiles:\n",                                  // 9
    "- schedulerName: default-scheduler\n",         // 10
);

#[test]
fn unknown_score_plugin_points_at_its_name() {
    let text = format!(
        "{NODE}{HEAD}{}",
        concat!(
            "  plugins:\n",                      // 11
            "    score:\n",                      // 12
            "      enabled:\n",                  // 13
            "      - name: NodeResourcesFit\n",  // 14
            "        weight: 1\n",               // 15
            "      - weight: 2\n",               // 16
            "        name: NodeResourcesFitt\n", // 17
        )
    );
    assert_eq!(
        error(&text, &RunOptions::default()),
        "F:17: profiles[0].plugins.score.enabled[1].name: ScorePlugin \"NodeResourcesFitt\" does not exist"
    );
}

#[test]
fn nested_plugin_args_point_at_the_bad_value() {
    let text = format!(
        "{NODE}{HEAD}{}",
        concat!(
            "  pluginConfig:\n",                     // 11
            "  - name: NodeResourcesFit\n",          // 12
            "    args:\n",                           // 13
            "      scoringStrategy:\n",              // 14
            "        type: LeastAllocated\n",        // 15
            "        resources:\n",                  // 16
            "        - {name: memory, weight: 1}\n", // 17
            "        - name: cpu\n",                 // 18
            "          weight: 101\n",               // 19
        )
    );
    assert_eq!(
        error(&text, &RunOptions::default()),
        "F:19: profiles[0].pluginConfig[0].args.scoringStrategy.resources[1].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]"
    );
    // A type error inside args is found when the plugin decodes them: same path, same line rule.
    let text = text.replace("weight: 101", "weight: heavy");
    assert_eq!(
        error(&text, &RunOptions::default()),
        "F:19: profiles[0].pluginConfig[0].args.scoringStrategy.resources[1].weight: invalid type: string \"heavy\", expected i64"
    );
}

#[test]
fn an_absent_field_points_at_its_parent() {
    // Two profiles: the second has no schedulerName, so the error names a field that is not in
    // the file; its parent, the profile item, starts on line 13.
    let text = format!(
        "{NODE}{HEAD}{}",
        concat!(
            "  plugins:\n",                           // 11
            "    score: {disabled: [{name: '*'}]}\n", // 12
            "- plugins:\n",                           // 13
            "    score: {disabled: [{name: '*'}]}\n", // 14
        )
    );
    assert_eq!(
        error(&text, &RunOptions::default()),
        "F:13: profiles[1].schedulerName: Required value"
    );
}

#[test]
fn duplicate_score_plugin_points_at_its_profile() {
    // The framework's error names the profile only (upstream `NewFramework` wording).
    let text = format!(
        "{NODE}{HEAD}{}",
        concat!(
            "  plugins:\n",                  // 11
            "    score:\n",                  // 12
            "      enabled:\n",              // 13
            "      - name: ImageLocality\n", // 14
            "      - name: ImageLocality\n", // 15
        )
    );
    let e = error(&text, &RunOptions::default());
    assert!(
        e.starts_with("F:10: profiles[0]: plugin \"ImageLocality\" already registered"),
        "{e}"
    );
}

#[test]
fn bad_percentage_and_aggregates_point_at_the_first_field() {
    let text = format!(
        "{NODE}{}",
        concat!(
            "apiVersion: kubescheduler.config.k8s.io/v1\n", // 6
            "kind: KubeSchedulerConfiguration\n",           // 7
            "profiles:\n",                                  // 8
            "- schedulerName: a\n",                         // 9
            "  percentageOfNodesToScore: 120\n",            // 10
        )
    );
    assert_eq!(
        error(&text, &RunOptions::default()),
        "F:10: profiles[0].percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]"
    );
    // Two field errors: the line of the first, the message as the scheduler aggregates them.
    let text = format!(
        "{NODE}{}",
        concat!(
            "apiVersion: kubescheduler.config.k8s.io/v1\n", // 6
            "kind: KubeSchedulerConfiguration\n",           // 7
            "profiles:\n",                                  // 8
            "- schedulerName: a\n",                         // 9
            "- schedulerName: a\n",                         // 10
            "percentageOfNodesToScore: -1\n",               // 11
        )
    );
    assert_eq!(
        error(&text, &RunOptions::default()),
        // Upstream's order: the profiles' errors, then the top-level percentage.
        "F:10: [profiles[1].schedulerName: Duplicate value: \"a\", percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]]"
    );
}

#[test]
fn scheduler_config_file_errors_name_that_file_and_line() {
    let config = write(concat!(
        "apiVersion: kubescheduler.config.k8s.io/v1\n", // 1
        "kind: KubeSchedulerConfiguration\n",           // 2
        "profiles:\n",                                  // 3
        "- schedulerName: default-scheduler\n",         // 4
        "  plugins:\n",                                 // 5
        "    filter:\n",                                // 6
        "      enabled: [{name: NoSuchFilter}]\n",      // 7
    ));
    let opts = RunOptions {
        scheduler_config: Some(config.clone()),
        ..Default::default()
    };
    let e = error(NODE, &opts).replace(&config.display().to_string(), "C");
    assert_eq!(
        e,
        "C:7: profiles[0].plugins.filter.enabled[0].name: FilterPlugin \"NoSuchFilter\" does not exist"
    );
}

#[test]
fn list_items_point_inside_the_list() {
    let text = format!(
        "{NODE}{}",
        concat!(
            "apiVersion: v1\n",                               // 6
            "kind: List\n",                                   // 7
            "items:\n",                                       // 8
            "- apiVersion: kubescheduler.config.k8s.io/v1\n", // 9
            "  kind: KubeSchedulerConfiguration\n",           // 10
            "  profiles:\n",                                  // 11
            "  - schedulerName: default-scheduler\n",         // 12
            "    plugins:\n",                                 // 13
            "      score:\n",                                 // 14
            "        enabled:\n",                             // 15
            "        - name: Nope\n",                         // 16
        )
    );
    assert_eq!(
        error(&text, &RunOptions::default()),
        "F:16: profiles[0].plugins.score.enabled[0].name: ScorePlugin \"Nope\" does not exist"
    );
}
