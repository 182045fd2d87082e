//! Label-key syntax for plugin args (`topologyKey` of PodTopologySpread default constraints):
//! upstream `metav1validation.ValidateLabelName`, i.e. `IsQualifiedName` of
//! `k8s.io/apimachinery/pkg/util/validation/validation.go` (`[prefix/]name`, prefix a DNS-1123
//! subdomain of at most 253 characters, name at most 63 bytes of `[-A-Za-z0-9_.]` starting and
//! ending alphanumeric), with upstream's messages.

use k8s_types::status::FieldError;

/// Upstream `qualifiedNameFmt`.
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
/// Upstream `qualifiedNameErrMsg`.
const QUALIFIED_NAME_ERR_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
/// Upstream `dns1123SubdomainFmt`.
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
/// Upstream `dns1123SubdomainErrorMsg`.
const DNS1123_SUBDOMAIN_ERR_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
/// Upstream `qualifiedNameMaxLength` (bytes).
const QUALIFIED_NAME_MAX_LENGTH: usize = 63;
/// Upstream `DNS1123SubdomainMaxLength` (characters).
const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;

/// Upstream `RegexError`: `<msg> (e.g. 'a',  or 'b', regex used for validation is '<fmt>')`.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut s = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push_str(&format!("'{e}', "));
    }
    s.push_str(&format!("regex used for validation is '{fmt}')"));
    s
}

fn is_name_chars(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

fn is_dns1123_label_chars(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Upstream `IsQualifiedName`: the problems with `value` (empty when valid).
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
                    errs.push(format!(
                        "prefix part must be no more than {DNS1123_SUBDOMAIN_MAX_LENGTH} characters"
                    ));
                }
                if !prefix.split('.').all(is_dns1123_label_chars) {
                    errs.push(format!(
                        "prefix part {}",
                        regex_error(
                            DNS1123_SUBDOMAIN_ERR_MSG,
                            DNS1123_SUBDOMAIN_FMT,
                            &["example.com"]
                        )
                    ));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_ERR_MSG,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        errs.push(format!(
            "name part must be no more than {QUALIFIED_NAME_MAX_LENGTH} bytes"
        ));
    }
    if !is_name_chars(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// Upstream `ValidateLabelName`: one `Invalid value: "<name>": <problem>` per problem, at `path`.
pub fn validate_label_name(name: &str, path: &str) -> Vec<FieldError> {
    is_qualified_name(name)
        .into_iter()
        .map(|m| FieldError::invalid(path, format!("\"{name}\""), m))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names_follow_upstream() {
        // Upstream validation_test.go TestIsQualifiedName: good and bad values.
        for good in [
            "simple",
            "now-with-dashes",
            "1-starts-with-num",
            "1234",
            "simple/simple",
            "now-with-dashes/simple",
            "1-num.2-num/3-num",
            "topology.kubernetes.io/zone",
            "kubernetes.io/hostname",
        ] {
            assert!(is_qualified_name(good).is_empty(), "{good}");
        }
        for bad in [
            "nospecialchars%^=@",
            "cantendwithadash-",
            "-cantstartwithadash-",
            "only/one/slash",
            "Example.com/abc",
            "example_com/abc",
            "example.com/",
            "/simple",
            "",
        ] {
            assert!(!is_qualified_name(bad).is_empty(), "{bad}");
        }
        let errs = validate_label_name("a/b/c", "args.defaultConstraints[0].topologyKey");
        assert_eq!(
            errs[0].to_string(),
            "args.defaultConstraints[0].topologyKey: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        );
    }
}
