//! Label selectors: upstream `metav1.LabelSelector` (matchLabels + matchExpressions) and its matching
//! rules (`k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go` `LabelSelectorAsSelector`,
//! `k8s.io/apimachinery/pkg/labels/selector.go`), plus the kubectl string form (`app=web,tier!=db`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Upstream `metav1.LabelSelector`. The requirements are ANDed. An empty selector matches everything;
/// callers that must treat "no selector" as "match nothing" (e.g. a Deployment) check for `None` first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    /// `{key: value}` pairs; each is `key In (value)`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    /// Set-based requirements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// Upstream `metav1.LabelSelectorRequirement`; `operator` is one of `In`, `NotIn`, `Exists`,
/// `DoesNotExist`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorRequirement {
    /// Label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: String,
    /// Values for `In`/`NotIn`; must be empty for `Exists`/`DoesNotExist`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// The four selector operators, as upstream `metav1.LabelSelectorOperator`.
pub const SELECTOR_OPERATORS: [&str; 4] = ["In", "NotIn", "Exists", "DoesNotExist"];

impl LabelSelectorRequirement {
    /// True when `labels` satisfy this requirement. An unknown operator matches nothing (the apiserver
    /// rejects such selectors at validation time).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let value = labels.get(&self.key);
        match self.operator.as_str() {
            "In" => value.is_some_and(|v| self.values.iter().any(|x| x == v)),
            "NotIn" => value.is_none_or(|v| !self.values.iter().any(|x| x == v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    }
}

impl LabelSelector {
    /// A selector with only `matchLabels`.
    pub fn from_labels<I: IntoIterator<Item = (K, V)>, K: Into<String>, V: Into<String>>(
        pairs: I,
    ) -> Self {
        LabelSelector {
            match_labels: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            match_expressions: Vec::new(),
        }
    }

    /// The protobuf-generated `String()` of `*metav1.LabelSelector` (k8s.io/apimachinery
    /// `pkg/apis/meta/v1/generated.pb.go`), as Go's `%v` prints a selector in messages:
    /// `&LabelSelector{MatchLabels:map[string]string{app: web,},MatchExpressions:[]LabelSelectorRequirement{},}`.
    pub fn go_string(&self) -> String {
        let mut labels = String::from("map[string]string{");
        for (k, v) in &self.match_labels {
            labels.push_str(&format!("{k}: {v},"));
        }
        labels.push('}');
        let mut exprs = String::from("[]LabelSelectorRequirement{");
        for r in &self.match_expressions {
            exprs.push_str(&format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                r.key,
                r.operator,
                r.values.join(" ")
            ));
        }
        exprs.push('}');
        format!("&LabelSelector{{MatchLabels:{labels},MatchExpressions:{exprs},}}")
    }

    /// True when there are no requirements (matches every object).
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }

    /// True when `labels` satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|r| r.matches(labels))
    }

    /// Parses the kubectl string form: comma-separated `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
    /// `k notin (a,b)`, `k` (exists) and `!k` (does not exist). Upstream: `labels.Parse`.
    ///
    /// # Errors
    /// A message naming the malformed requirement.
    pub fn parse(s: &str) -> Result<LabelSelector, String> {
        let mut sel = LabelSelector::default();
        for part in split_top_level(s) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let req = parse_requirement(part)?;
            sel.match_expressions.push(req);
        }
        Ok(sel)
    }
}

fn split_top_level(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

fn parse_requirement(part: &str) -> Result<LabelSelectorRequirement, String> {
    let req = |key: &str, op: &str, values: Vec<String>| LabelSelectorRequirement {
        key: key.trim().to_string(),
        operator: op.to_string(),
        values,
    };
    if let Some((k, v)) = part.split_once("!=") {
        return Ok(req(k, "NotIn", vec![v.trim().to_string()]));
    }
    if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
        return Ok(req(k, "In", vec![v.trim().to_string()]));
    }
    for (word, op) in [(" notin ", "NotIn"), (" in ", "In")] {
        if let Some((k, rest)) = part.split_once(word) {
            let rest = rest.trim();
            let inner = rest
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| {
                    format!("invalid label selector requirement {part:?}: expected (values)")
                })?;
            let values = inner.split(',').map(|v| v.trim().to_string()).collect();
            return Ok(req(k, op, values));
        }
    }
    if let Some(k) = part.strip_prefix('!') {
        return Ok(req(k, "DoesNotExist", Vec::new()));
    }
    if part.contains(char::is_whitespace) || part.is_empty() {
        return Err(format!("invalid label selector requirement {part:?}"));
    }
    Ok(req(part, "Exists", Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn match_labels_and_expressions_are_anded() {
        let sel = LabelSelector {
            match_labels: labels(&[("app", "web")]),
            match_expressions: vec![LabelSelectorRequirement {
                key: "tier".into(),
                operator: "NotIn".into(),
                values: vec!["db".into()],
            }],
        };
        assert!(sel.matches(&labels(&[("app", "web")])));
        assert!(sel.matches(&labels(&[("app", "web"), ("tier", "fe")])));
        assert!(!sel.matches(&labels(&[("app", "web"), ("tier", "db")])));
        assert!(!sel.matches(&labels(&[("app", "db")])));
        assert!(LabelSelector::default().matches(&labels(&[])));
    }

    #[test]
    fn string_form_parses_every_operator() {
        let sel = LabelSelector::parse("app=web, tier!=db, env in (a,b), gpu, !spot").unwrap();
        let ops: Vec<_> = sel
            .match_expressions
            .iter()
            .map(|r| (r.key.as_str(), r.operator.as_str(), r.values.len()))
            .collect();
        assert_eq!(
            ops,
            vec![
                ("app", "In", 1),
                ("tier", "NotIn", 1),
                ("env", "In", 2),
                ("gpu", "Exists", 0),
                ("spot", "DoesNotExist", 0)
            ]
        );
        assert!(sel.matches(&labels(&[("app", "web"), ("env", "b"), ("gpu", "1")])));
        assert!(!sel.matches(&labels(&[("app", "web"), ("env", "c"), ("gpu", "1")])));
        assert!(LabelSelector::parse("a in b").is_err());
    }
}
