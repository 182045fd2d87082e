//! Where a field of a YAML document is: the line of the node a field path such as
//! `profiles[0].plugins.score.enabled[1].name` names, so that errors found after decoding (the
//! scheduler configuration's validation, which only knows field paths) can point at the line of the
//! field, as kubectl's and kube-scheduler's decoders point type errors at theirs. serde_yaml keeps
//! no positions, so the document is read a second time with `yaml-rust2`'s event parser, whose
//! events carry `Marker`s (1-based lines).
//!
//! Field paths are the ones `serde_path_to_error` and upstream `field.Path`
//! (`k8s.io/apimachinery/pkg/util/validation/field/path.go`) print: keys joined by `.`, sequence
//! indices as `[i]`. A map key that itself contains dots (`nvidia.com/gpu`) is found too.

use yaml_rust2::parser::{Event, Parser};

/// The lines of every node of one YAML document (mapping keys, sequence items, scalars).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Positions {
    root: Node,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Node {
    /// 1-based line in the file where the node starts.
    line: usize,
    kind: NodeKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum NodeKind {
    /// A scalar or an alias: nothing below it.
    Leaf,
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// The key when it is a scalar (complex keys are kept as `None`, never matched).
    key: Option<String>,
    /// 1-based line of the key.
    line: usize,
    value: Node,
}

/// An open collection while the events are read.
enum Frame {
    Seq(usize, Vec<Node>),
    Map(usize, Vec<Entry>, Option<(Option<String>, usize)>),
}

/// One `.`-separated piece of a field path: a key (empty for a path that starts with `[i]`) and
/// the sequence indices written after it.
struct Part<'a> {
    name: &'a str,
    indices: Vec<usize>,
}

fn split_path(path: &str) -> Vec<Part<'_>> {
    if path.is_empty() || path == "." {
        return Vec::new();
    }
    path.split('.')
        .map(|piece| {
            if let Some(open) = piece.find('[') {
                if let Some(indices) = parse_indices(&piece[open..]) {
                    return Part {
                        name: &piece[..open],
                        indices,
                    };
                }
            }
            Part {
                name: piece,
                indices: Vec::new(),
            }
        })
        .collect()
}

/// `[1][2]` -> `[1, 2]`; `None` when the text is anything else.
fn parse_indices(mut s: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    while !s.is_empty() {
        let rest = s.strip_prefix('[')?;
        let close = rest.find(']')?;
        out.push(rest[..close].parse().ok()?);
        s = &rest[close + 1..];
    }
    Some(out)
}

impl Positions {
    /// Reads the first YAML document of `text`; `first_line` is the file line of `text`'s first
    /// line (1-based), so every line this returns is a line of the file.
    ///
    /// Returns `None` when the text is not valid YAML or holds no node.
    pub fn parse(text: &str, first_line: usize) -> Option<Positions> {
        let offset = first_line.saturating_sub(1);
        let mut parser = Parser::new_from_str(text);
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            let (event, mark) = parser.next_token().ok()?;
            let line = mark.line() + offset;
            let done = match event {
                Event::Scalar(value, ..) => Some((
                    Node {
                        line,
                        kind: NodeKind::Leaf,
                    },
                    Some(value),
                )),
                Event::Alias(_) => Some((
                    Node {
                        line,
                        kind: NodeKind::Leaf,
                    },
                    None,
                )),
                Event::SequenceStart(..) => {
                    stack.push(Frame::Seq(line, Vec::new()));
                    None
                }
                Event::MappingStart(..) => {
                    stack.push(Frame::Map(line, Vec::new(), None));
                    None
                }
                Event::SequenceEnd | Event::MappingEnd => match stack.pop()? {
                    Frame::Seq(line, items) => Some((
                        Node {
                            line,
                            kind: NodeKind::Seq(items),
                        },
                        None,
                    )),
                    Frame::Map(line, entries, _) => Some((
                        Node {
                            line,
                            kind: NodeKind::Map(entries),
                        },
                        None,
                    )),
                },
                Event::DocumentEnd | Event::StreamEnd => return None,
                Event::Nothing | Event::StreamStart | Event::DocumentStart => None,
            };
            let Some((node, scalar)) = done else {
                continue;
            };
            match stack.last_mut() {
                None => return Some(Positions { root: node }),
                Some(Frame::Seq(_, items)) => items.push(node),
                Some(Frame::Map(_, entries, pending)) => match pending.take() {
                    None => *pending = Some((scalar, node.line)),
                    Some((key, key_line)) => entries.push(Entry {
                        key,
                        line: key_line,
                        value: node,
                    }),
                },
            }
        }
    }

    /// The file line where the document's root node starts (its first line of content).
    pub fn first_line(&self) -> usize {
        self.root.line
    }

    /// The positions of the node at `path` alone (e.g. `items[2]` of a `kind: List`), with the same
    /// file lines; `None` when no node is at `path`.
    pub fn subtree(&self, path: &str) -> Option<Positions> {
        match resolve(&self.root, &split_path(path)) {
            (_, Some(node)) => Some(Positions { root: node.clone() }),
            (_, None) => None,
        }
    }

    /// The file line of the field `path` names: the line of its key for a mapping field, of the
    /// item for a sequence index. When the path goes further than the document (a field left out,
    /// an index past the end), the line of the deepest node that exists, down to the root's line.
    pub fn line_of(&self, path: &str) -> usize {
        resolve(&self.root, &split_path(path)).0
    }
}

/// Walks `parts` down from `root`: the line of the deepest node reached, and the node itself when
/// the whole path was found.
fn resolve<'a>(root: &'a Node, parts: &[Part<'_>]) -> (usize, Option<&'a Node>) {
    let mut node = root;
    let mut line = root.line;
    let mut i = 0;
    while i < parts.len() {
        // The piece whose indices apply after the key (the last one joined into a dotted key).
        let mut last = i;
        if !parts[i].name.is_empty() {
            let NodeKind::Map(entries) = &node.kind else {
                return (line, None);
            };
            let mut found = None;
            let mut key = String::new();
            for (k, part) in parts.iter().enumerate().skip(i) {
                if k > i {
                    // A key with dots in it cannot have had indices in its middle.
                    if !parts[k - 1].indices.is_empty() {
                        break;
                    }
                    key.push('.');
                }
                key.push_str(part.name);
                if let Some(e) = entries.iter().find(|e| e.key.as_deref() == Some(&key)) {
                    found = Some((e, k));
                    break;
                }
            }
            let Some((entry, k)) = found else {
                return (line, None);
            };
            node = &entry.value;
            line = entry.line;
            last = k;
        }
        for &index in &parts[last].indices {
            let NodeKind::Seq(items) = &node.kind else {
                return (line, None);
            };
            let Some(item) = items.get(index) else {
                return (line, None);
            };
            node = item;
            line = item.line;
        }
        i = last + 1;
    }
    (line, Some(node))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Line numbers are counted by hand from the text (line 1 = the first line of `DOC`).
    const DOC: &str = "\
# a comment first
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 2
      - {name: Nope, weight: 1}
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        resources:
        - {name: nvidia.com/gpu, weight: 3}
        - name: cpu
          weight: -1
    extra:
      nvidia.com/gpu: 4
";

    fn positions() -> Positions {
        Positions::parse(DOC, 1).expect("valid YAML")
    }

    #[test]
    fn fields_and_items_point_at_their_own_line() {
        let p = positions();
        assert_eq!(p.first_line(), 2);
        assert_eq!(p.line_of(""), 2);
        assert_eq!(p.line_of("kind"), 3);
        assert_eq!(p.line_of("profiles"), 4);
        assert_eq!(p.line_of("profiles[0]"), 5);
        assert_eq!(p.line_of("profiles[0].schedulerName"), 5);
        assert_eq!(p.line_of("profiles[0].plugins.score.enabled[0].weight"), 10);
        assert_eq!(p.line_of("profiles[0].plugins.score.enabled[1]"), 11);
        assert_eq!(p.line_of("profiles[0].plugins.score.enabled[1].name"), 11);
        assert_eq!(
            p.line_of("profiles[0].pluginConfig[0].args.scoringStrategy.resources[1].weight"),
            19
        );
        assert_eq!(
            p.line_of("profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].name"),
            17
        );
    }

    #[test]
    fn keys_with_dots_are_found() {
        assert_eq!(
            positions().line_of("profiles[0].pluginConfig[0].extra.nvidia.com/gpu"),
            21
        );
    }

    #[test]
    fn a_missing_leaf_falls_back_to_its_deepest_parent() {
        let p = positions();
        // `percentageOfNodesToScore` is not in the profile: the profile's line.
        assert_eq!(p.line_of("profiles[0].percentageOfNodesToScore"), 5);
        // No third score plugin: the `enabled:` key.
        assert_eq!(p.line_of("profiles[0].plugins.score.enabled[2].name"), 8);
        // Indexing a mapping, descending into a scalar: the last node that exists.
        assert_eq!(p.line_of("profiles[0].plugins[0]"), 6);
        assert_eq!(p.line_of("kind.name"), 3);
        // Nothing of the path exists: the document's first line of content.
        assert_eq!(p.line_of("percentageOfNodesToScore"), 2);
    }

    #[test]
    fn lines_are_shifted_to_the_file_and_subtrees_keep_them() {
        // The document starts at line 10 of its file; `items[1]` starts on its line 5.
        let list =
            "apiVersion: v1\nkind: List\nitems:\n- {kind: A}\n- kind: B\n  spec:\n    x: 1\n";
        let p = Positions::parse(list, 10).expect("valid YAML");
        let item = p.subtree("items[1]").expect("items[1] exists");
        assert_eq!(item.first_line(), 14);
        assert_eq!(item.line_of("spec.x"), 16);
        assert_eq!(item.line_of("spec.y"), 15);
        assert!(p.subtree("items[2]").is_none());
    }

    #[test]
    fn invalid_or_empty_text_has_no_positions() {
        assert!(Positions::parse("a: [1, 2\n", 1).is_none());
        assert!(Positions::parse("# only a comment\n", 1).is_none());
    }
}
