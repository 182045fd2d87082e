//! Label selectors: upstream `metav1.LabelSelector` (matchLabels + matchExpressions) and its matching
//! rules (`k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go` `LabelSelectorAsSelector`,
//! `k8s.io/apimachinery/pkg/labels/selector.go`), plus the kubectl string form (`app=web,tier!=db`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod parser;

/// Upstream `metav1.LabelSelector`. The requirements are ANDed. An empty selector matches everything;
/// callers that must treat "no selector" as "match nothing" (e.g. a Deployment) check for `None` first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
/// `DoesNotExist` (and, only in a selector parsed from the string form, `Gt` / `Lt`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
            // Only from the string form (`k>1`): upstream `Requirement.Matches` for
            // `selection.GreaterThan` / `LessThan`, both sides parsed as int64.
            "Gt" | "Lt" => {
                let (Some(v), [want]) = (value, self.values.as_slice()) else {
                    return false;
                };
                match (v.parse::<i64>(), want.parse::<i64>()) {
                    (Ok(v), Ok(w)) => {
                        (self.operator == "Gt" && v > w) || (self.operator == "Lt" && v < w)
                    }
                    _ => false,
                }
            }
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

    /// Parses the string form (`kubectl -l`, `?labelSelector=`): comma-separated `k=v`, `k==v`,
    /// `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k` (exists), `!k` (does not exist), `k>1`, `k<1`,
    /// as upstream `labels.Parse` (see [`parser`]).
    ///
    /// # Errors
    /// Upstream's message, e.g. `unable to parse requirement: found '=', expected: identifier`
    /// for `a===b`.
    pub fn parse(s: &str) -> Result<LabelSelector, String> {
        parser::parse(s)
    }
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
        // Sorted by key, as upstream `parse` does.
        let ops: Vec<_> = sel
            .match_expressions
            .iter()
            .map(|r| (r.key.as_str(), r.operator.as_str(), r.values.len()))
            .collect();
        assert_eq!(
            ops,
            vec![
                ("app", "In", 1),
                ("env", "In", 2),
                ("gpu", "Exists", 0),
                ("spot", "DoesNotExist", 0),
                ("tier", "NotIn", 1),
            ]
        );
        assert!(sel.matches(&labels(&[("app", "web"), ("env", "b"), ("gpu", "1")])));
        assert!(!sel.matches(&labels(&[("app", "web"), ("env", "c"), ("gpu", "1")])));
    }

    /// The good strings of upstream `TestSelectorParse` (selector_test.go) all parse; `x=` is the
    /// empty value; `()` and empty list entries are the empty string, and value sets are sorted
    /// and deduplicated (`sets.String.List`); `in`/`notin` are plain values (and keys) outside the
    /// operator position.
    #[test]
    fn upstream_good_strings_parse() {
        for s in [
            "x=a,y=b,z=c",
            "",
            "x!=a,y=b",
            "x=",
            "x= ",
            "x=,z= ",
            "x= ,z= ",
            "!x",
            "x>1",
            "x>1,z<5",
        ] {
            assert!(LabelSelector::parse(s).is_ok(), "{s}");
        }
        let x = LabelSelector::parse("x=").unwrap();
        assert_eq!(x.match_expressions[0].values, vec![String::new()]);
        let sel = LabelSelector::parse("x in (foo,,baz,foo),y,z notin ()").unwrap();
        let got: Vec<_> = sel
            .match_expressions
            .iter()
            .map(|r| (r.key.as_str(), r.operator.as_str(), r.values.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("x", "In", vec!["".to_string(), "baz".into(), "foo".into()]),
                ("y", "Exists", vec![]),
                ("z", "NotIn", vec!["".to_string()]),
            ]
        );
        let kw = LabelSelector::parse("in in (in,notin)").unwrap();
        assert_eq!(kw.match_expressions[0].key, "in");
        assert_eq!(kw.match_expressions[0].values, vec!["in", "notin"]);
    }

    /// Upstream's errors, traced through `selector.go` by hand: the lexer scans `===` as `==`
    /// then `=`; a second operator after a value, or any operator after `!key`, is reported by
    /// `parse`; `x<a` fails `NewRequirement`'s integer check; `a||y` is one identifier that is
    /// not a label value; a bad key is validated with the parser's nil path.
    #[test]
    fn upstream_bad_strings_fail_with_upstream_messages() {
        let err = |s: &str| LabelSelector::parse(s).unwrap_err();
        assert_eq!(
            err("a===b"),
            "unable to parse requirement: found '=', expected: identifier"
        );
        assert_eq!(
            err("x==a==b"),
            "found '==', expected: ',' or 'end of string'"
        );
        assert_eq!(err("!x=a"), "found '=', expected: ',' or 'end of string'");
        assert_eq!(
            err("x<a"),
            "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert!(err("x=a||y=b").starts_with(
            "unable to parse requirement: values[0][x]: Invalid value: \"a||y\": a valid label must be an empty string"
        ));
        assert!(err("-x=a").starts_with(
            "unable to parse requirement: <nil>: Invalid value: \"-x\": name part must consist of alphanumeric characters"
        ));
        assert_eq!(err("x,"), "found '', expected: identifier after ','");
        assert_eq!(
            err("x in a"),
            "unable to parse requirement: found 'a' expected: '('"
        );
        assert_eq!(
            err("x (a)"),
            "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(
            err(","),
            "found ',', expected: !, identifier, or 'end of string'"
        );
    }

    /// `Gt`/`Lt` compare the label's value and the requirement's as int64 (upstream
    /// `Requirement.Matches`); a missing or non-integer label matches neither.
    #[test]
    fn greater_and_less_than_compare_integers() {
        let sel = LabelSelector::parse("gpu>2,mem<64").unwrap();
        assert!(sel.matches(&labels(&[("gpu", "4"), ("mem", "32")])));
        assert!(!sel.matches(&labels(&[("gpu", "2"), ("mem", "32")])));
        assert!(!sel.matches(&labels(&[("gpu", "x"), ("mem", "32")])));
        assert!(!sel.matches(&labels(&[("mem", "32")])));
        assert!(!sel.matches(&labels(&[("gpu", "4"), ("mem", "64")])));
    }
}
