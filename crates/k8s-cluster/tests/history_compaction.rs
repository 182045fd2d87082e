//! The store's history is compacted within each tick (etcd compaction, `Cluster::tick`), to the
//! oldest revision a watcher still needs. A reader that watches between ticks from where it last
//! read still sees every change, each revision exactly once; a watch from a compacted revision
//! answers `410 Gone`, as kube-apiserver answers a resourceVersion etcd has compacted
//! (`too old resource version`).

use std::collections::BTreeSet;

use k8s_cluster::manifest::{parse_stream, Document};
use k8s_cluster::{Cluster, ClusterConfig};
use k8s_types::Kind;

/// Two nodes and a Deployment of 6 replicas: creates, binds, status writes and Events over the
/// first ticks.
fn cluster() -> Cluster {
    let mut text = String::new();
    for i in 0..2 {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-{i}}}\n\
             status:\n  capacity: {{cpu: \"4\", memory: 32Gi, pods: \"110\"}}\n"
        ));
    }
    text.push_str(
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  \
         replicas: 6\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: \
         {labels: {app: web}}\n    spec:\n      containers:\n      - name: c\n        image: \
         app:v1\n",
    );
    let mut c = Cluster::new(ClusterConfig::default()).expect("cluster");
    c.begin_tick();
    for d in parse_stream("test", &text).expect("parse").docs {
        if let Document::Object(o) = d.doc {
            c.apply(*o).expect("apply");
        }
    }
    c
}

#[test]
fn a_reader_between_ticks_sees_every_revision_once() {
    let mut c = cluster();
    let mut seen: Vec<i64> = Vec::new();
    let mut from = 0;
    for _ in 0..12 {
        c.begin_tick();
        c.tick();
        let api = c.api_ref();
        for kind in Kind::TYPED {
            let events = api
                .watch(&kind, from)
                .expect("history after the last read is kept");
            seen.extend(events.iter().map(|e| e.revision));
        }
        from = api.revision();
    }
    // Every write from the first one (revision 1) to the last took one revision, and each was
    // seen once: the union of the reads is exactly 1..=last.
    seen.sort_unstable();
    let expected: Vec<i64> = (1..=c.api_ref().revision()).collect();
    assert_eq!(seen, expected);
    let kinds: BTreeSet<i64> = seen.iter().copied().collect();
    assert_eq!(kinds.len(), seen.len());
}

#[test]
fn a_compacted_revision_answers_410_gone() {
    let mut c = cluster();
    for _ in 0..5 {
        c.begin_tick();
        c.tick();
    }
    let api = c.api_ref();
    let err = api
        .watch(&Kind::Pod, 1)
        .expect_err("revision 1 is compacted");
    assert_eq!(err.code, 410);
    // The history of the last tick is still there: a watch from the revision at its end answers.
    assert!(api
        .watch(&Kind::Pod, api.revision())
        .expect("now")
        .is_empty());
}
