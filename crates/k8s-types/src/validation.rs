//! Name and label syntax checks with upstream's exact messages: DNS-1123 labels and subdomains
//! (`k8s.io/apimachinery/pkg/util/validation/validation.go` `IsDNS1123Label`,
//! `IsDNS1123Subdomain`), label keys and values (`k8s.io/apimachinery/pkg/api/validate/content/kube.go`
//! `IsLabelKey`, `IsLabelValue`), percent strings (`IsValidPercent`), port names (`IsValidPortName`),
//! path segment names (`k8s.io/apimachinery/pkg/api/validation/path/name.go`) and the
//! `NameIsDNSSubdomain`/`NameIsDNSLabel` name functions with their generateName prefix rule.
//!
//! Each check returns a list of messages (empty = valid), as upstream; callers turn each message
//! into one `Invalid value` field error.

/// Upstream `dns1123LabelFmt`.
pub const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
/// Upstream `dns1123LabelErrMsg`.
pub const DNS1123_LABEL_ERR_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
/// Upstream `dns1123SubdomainFmt`.
pub const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
/// Upstream `dns1123SubdomainErrorMsg`.
pub const DNS1123_SUBDOMAIN_ERR_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
/// Upstream `DNS1123LabelMaxLength` (bytes).
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;
/// Upstream `DNS1123SubdomainMaxLength` (bytes).
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
/// Upstream `labelKeyFmt`.
pub const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
/// Upstream `labelKeyErrMsg`.
pub const LABEL_KEY_ERR_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
/// Upstream `labelValueFmt`.
pub const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
/// Upstream `labelValueErrMsg`.
pub const LABEL_VALUE_ERR_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
/// Upstream `LabelValueMaxLength` and `labelKeyMaxLength` (bytes).
pub const LABEL_MAX_LENGTH: usize = 63;
/// Upstream `percentFmt`.
pub const PERCENT_FMT: &str = "[0-9]+%";
/// Upstream `percentErrMsg`.
pub const PERCENT_ERR_MSG: &str =
    "a valid percent string must be a numeric string followed by an ending '%'";

/// Upstream `RegexError`: `<msg> (e.g. 'a',  or 'b', regex used for validation is '<fmt>')` (the
/// double space after each example's comma is upstream's).
pub fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let mut s = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push('\'');
        s.push_str(e);
        s.push_str("', ");
    }
    s.push_str("regex used for validation is '");
    s.push_str(fmt);
    s.push_str("')");
    s
}

/// Upstream `MaxLenError` of `k8s.io/apimachinery/pkg/util/validation` (used for names).
pub fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// Upstream `MaxLenError` of `k8s.io/apimachinery/pkg/api/validate/content` (used for label keys
/// and values).
pub fn content_max_len_error(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

fn is_label_chars(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

fn is_subdomain_chars(s: &str) -> bool {
    s.split('.').all(is_label_chars)
}

/// True when `s` matches [`DNS1123_LABEL_FMT`].
pub fn matches_dns1123_label(s: &str) -> bool {
    is_label_chars(s)
}

/// Upstream `IsDNS1123Label`.
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !is_label_chars(value) {
        if is_subdomain_chars(value) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_ERR_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// Upstream `IsDNS1123Subdomain`.
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !is_subdomain_chars(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// Upstream `maskTrailingDash`: a generateName prefix may end with '-' (a suffix follows).
fn mask_trailing_dash(name: &str) -> String {
    match name.strip_suffix('-') {
        Some(stem) if !stem.is_empty() => format!("{stem}a"),
        _ => name.to_string(),
    }
}

/// Upstream `NameIsDNSSubdomain(name, prefix)`.
pub fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        is_dns1123_subdomain(&mask_trailing_dash(name))
    } else {
        is_dns1123_subdomain(name)
    }
}

/// Upstream `NameIsDNSLabel(name, prefix)` (namespace names).
pub fn name_is_dns_label(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        is_dns1123_label(&mask_trailing_dash(name))
    } else {
        is_dns1123_label(name)
    }
}

/// Upstream `path.IsValidPathSegmentName` / `ValidatePathSegmentName`: the only rule for kinds whose
/// own name rule k8s-mini does not know.
pub fn name_is_path_segment(name: &str, prefix: bool) -> Vec<String> {
    let mut errs = Vec::new();
    if !prefix {
        for illegal in [".", ".."] {
            if name == illegal {
                errs.push(format!("may not be '{illegal}'"));
            }
        }
    }
    for illegal in ["/", "%"] {
        if name.contains(illegal) {
            errs.push(format!("may not contain '{illegal}'"));
        }
    }
    errs
}

fn is_label_key_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// Upstream `IsLabelKey` (a.k.a. `IsQualifiedName`): `[prefix/]name`, prefix a DNS subdomain, name
/// at most 63 bytes of `[-A-Za-z0-9_.]` starting and ending alphanumeric.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                for m in is_dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {m}"));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(LABEL_KEY_ERR_MSG, LABEL_KEY_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > LABEL_MAX_LENGTH {
        errs.push(format!(
            "name part {}",
            content_max_len_error(LABEL_MAX_LENGTH)
        ));
    }
    if !is_label_key_name(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                LABEL_KEY_ERR_MSG,
                LABEL_KEY_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// Upstream `IsLabelValue`.
pub fn is_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_MAX_LENGTH {
        errs.push(content_max_len_error(LABEL_MAX_LENGTH));
    }
    if !value.is_empty() && !is_label_key_name(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// Upstream `IsValidPercent`.
pub fn is_valid_percent(s: &str) -> Vec<String> {
    let ok = s
        .strip_suffix('%')
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()));
    if ok {
        Vec::new()
    } else {
        vec![regex_error(PERCENT_ERR_MSG, PERCENT_FMT, &["1%", "93%"])]
    }
}

/// Upstream `IsValidPortName`.
pub fn is_valid_port_name(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push(max_len_error(15));
    }
    if port.is_empty()
        || !port
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
    {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !port.bytes().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".into());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".into());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errs.push("must not begin or end with a hyphen".into());
    }
    errs
}

/// Upstream `InclusiveRangeError`.
pub fn inclusive_range_error(lo: i64, hi: i64) -> String {
    format!("must be between {lo} and {hi}, inclusive")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomain_message_is_upstreams() {
        // Upstream validation_test.go TestIsDNS1123Subdomain bad values include "A" and "a..b".
        assert_eq!(
            is_dns1123_subdomain("Web_1"),
            vec!["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_string()]
        );
        assert!(is_dns1123_subdomain("a..b").len() == 1);
        assert!(is_dns1123_subdomain("web-0.example").is_empty());
        assert_eq!(
            is_dns1123_subdomain(&"a".repeat(254)),
            vec![max_len_error(253)]
        );
    }

    #[test]
    fn label_rules_distinguish_dots() {
        assert_eq!(
            is_dns1123_label("a.b"),
            vec!["must not contain dots".to_string()]
        );
        assert_eq!(
            is_dns1123_label("-a")[0],
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        );
        // generateName prefixes may end with '-'.
        assert!(name_is_dns_subdomain("web-", true).is_empty());
        assert_eq!(name_is_dns_subdomain("web-", false).len(), 1);
    }

    #[test]
    fn qualified_names_and_label_values() {
        assert!(is_qualified_name("app").is_empty());
        assert!(is_qualified_name("example.com/MyName").is_empty());
        assert_eq!(
            is_qualified_name("/a"),
            vec!["prefix part must be non-empty".to_string()]
        );
        assert_eq!(
            is_qualified_name("a/b/c")[0],
            "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        );
        assert!(is_label_value("").is_empty());
        assert_eq!(is_label_value("-x").len(), 1);
        assert_eq!(
            is_label_value(&"a".repeat(64)),
            vec!["must be no more than 63 bytes".to_string()]
        );
    }

    #[test]
    fn percent_and_port_names() {
        assert!(is_valid_percent("25%").is_empty());
        assert_eq!(
            is_valid_percent("25"),
            vec!["a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')".to_string()]
        );
        assert!(is_valid_port_name("http").is_empty());
        assert_eq!(
            is_valid_port_name("80"),
            vec!["must contain at least one letter (a-z)".to_string()]
        );
    }
}
