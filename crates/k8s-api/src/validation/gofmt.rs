//! How upstream prints a field error's bad value (`k8s.io/apimachinery/pkg/util/validation/field/
//! errors.go` `ErrorBody`): strings with Go's `%q`, numbers and bools with `%v`, types with a
//! `String()` method (Quantity, IntOrString, ResourceName, the protobuf-generated `LabelSelector`)
//! through it, and everything else with Go's `%#v`. These helpers reproduce the renderings k8s-mini
//! needs so messages read exactly like kube-apiserver's.

use std::collections::BTreeMap;

use k8s_types::labels::LabelSelector;

/// Go `%q` of a string: double-quoted with `\"`, `\\`, `\n`, `\t`, `\r` and `\x..` escapes for
/// other control characters.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go `%#v` of a `map[string]string` (keys sorted, as `fmt` prints maps): `map[string]string{"a":"b",
/// "c":"d"}`; an empty map prints as a nil map, `map[string]string(nil)`, because that is what an
/// omitted field decodes to.
pub fn go_string_map(m: &BTreeMap<String, String>) -> String {
    if m.is_empty() {
        return "map[string]string(nil)".to_string();
    }
    let body = m
        .iter()
        .map(|(k, v)| format!("{}:{}", quote(k), quote(v)))
        .collect::<Vec<_>>()
        .join(", ");
    format!("map[string]string{{{body}}}")
}

/// The protobuf-generated `String()` of `*metav1.LabelSelector` (k8s.io/apimachinery
/// `pkg/apis/meta/v1/generated.pb.go`): `&LabelSelector{MatchLabels:map[string]string{app: web,},
/// MatchExpressions:[]LabelSelectorRequirement{},}`.
pub fn label_selector_string(sel: &LabelSelector) -> String {
    sel.go_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_print_like_go_sharp_v() {
        let mut m = BTreeMap::new();
        m.insert("tier".to_string(), "fe".to_string());
        m.insert("app".to_string(), "web".to_string());
        assert_eq!(
            go_string_map(&m),
            r#"map[string]string{"app":"web", "tier":"fe"}"#
        );
        assert_eq!(go_string_map(&BTreeMap::new()), "map[string]string(nil)");
        assert_eq!(quote("a\"b"), r#""a\"b""#);
    }

    #[test]
    fn selectors_print_like_the_generated_string_method() {
        let sel = LabelSelector::from_labels([("app", "web")]);
        assert_eq!(
            label_selector_string(&sel),
            "&LabelSelector{MatchLabels:map[string]string{app: web,},MatchExpressions:[]LabelSelectorRequirement{},}"
        );
    }
}
