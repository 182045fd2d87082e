//! The string form of a label selector (`app=web,tier in (a,b),!spot,gpu>2`), parsed as upstream
//! `labels.Parse` does (`k8s.io/apimachinery/pkg/labels/selector.go`: the `Lexer`, the recursive
//! descent `Parser`, `NewRequirement`'s checks), with its error messages:
//!
//! - tokens: identifiers and the keywords `in` / `notin` (which are plain values inside value
//!   lists), and the special symbols `=`, `==`, `!=`, `!`, `(`, `)`, `,`, `>`, `<`, scanned
//!   greedily (`===` is `==` then `=`); whitespace is ` `, `\t`, `\r`, `\n`;
//! - a requirement is `[!]KEY [(in|notin) (VALUES) | (=|==|!=|>|<) VALUE]`; an empty exact value
//!   (`app=`) is the empty string, `()` is the set holding the empty string;
//! - keys must be qualified names (`content.IsLabelKey`), values valid label values
//!   (`content.IsLabelValue`), `>`/`<` values integers (`strconv.ParseInt`);
//! - value sets are deduplicated and sorted (`sets.String.List`), and the requirements sorted by
//!   key (stable) "to grant deterministic parsing".
//!
//! `=` and `==` become `In` with one value and `!=` `NotIn`, which match the same labels;
//! `>` and `<` become the `Gt` / `Lt` operators of [`LabelSelectorRequirement::matches`].

use super::{LabelSelector, LabelSelectorRequirement};
use crate::validation::{is_label_value, is_qualified_name};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

/// Upstream `string2token`.
fn keyword(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special_symbol(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Upstream `Lexer.Lex` over the whole input (`Parser.scan`).
fn scan(s: &str) -> Vec<(Token, String)> {
    let b = s.as_bytes();
    let mut pos = 0;
    let mut items = Vec::new();
    loop {
        while pos < b.len() && is_whitespace(b[pos]) {
            pos += 1;
        }
        if pos >= b.len() {
            items.push((Token::EndOfString, String::new()));
            return items;
        }
        let start = pos;
        if is_special_symbol(b[pos]) {
            // Longest special-symbol run that is still a token.
            let mut last: Option<(Token, usize)> = None;
            while pos < b.len() && is_special_symbol(b[pos]) {
                let cand = &s[start..=pos];
                if let Some(t) = keyword(cand) {
                    last = Some((t, pos + 1));
                } else if last.is_some() {
                    break;
                }
                pos += 1;
            }
            match last {
                Some((t, end)) => {
                    items.push((t, s[start..end].to_string()));
                    pos = end;
                }
                None => items.push((
                    Token::Error,
                    format!("error expected: keyword found '{}'", &s[start..pos]),
                )),
            }
        } else {
            while pos < b.len() && !is_special_symbol(b[pos]) && !is_whitespace(b[pos]) {
                pos += 1;
            }
            let lit = &s[start..pos];
            let tok = keyword(lit).unwrap_or(Token::Identifier);
            items.push((tok, lit.to_string()));
        }
    }
}

/// Upstream `ParserContext`: inside values, `in` and `notin` are identifiers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
}

/// Upstream `binaryOperators`, as `parseOperator`'s error lists them.
const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

impl Parser {
    fn item(&self, i: usize, ctx: Context) -> (Token, String) {
        let (t, l) = self
            .items
            .get(i)
            .cloned()
            .unwrap_or((Token::EndOfString, String::new()));
        match (ctx, t) {
            (Context::Values, Token::In | Token::NotIn) => (Token::Identifier, l),
            _ => (t, l),
        }
    }

    fn lookahead(&self, ctx: Context) -> (Token, String) {
        self.item(self.position, ctx)
    }

    fn consume(&mut self, ctx: Context) -> (Token, String) {
        self.position += 1;
        self.item(self.position - 1, ctx)
    }

    fn parse(&mut self) -> Result<Vec<LabelSelectorRequirement>, String> {
        let mut reqs = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    reqs.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Token::EndOfString => return Ok(reqs),
                        Token::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Token::EndOfString => return Ok(reqs),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ))
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<LabelSelectorRequirement, String> {
        let (key, unary) = self.parse_key_and_infer_operator()?;
        if let Some(op) = unary {
            return new_requirement(&key, op, Vec::new());
        }
        let op = self.parse_operator()?;
        let values = match op {
            "In" | "NotIn" => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        new_requirement(&key, op, values)
    }

    /// The key, and `Exists` / `DoesNotExist` when no binary operator follows.
    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<&'static str>), String> {
        let mut does_not_exist = false;
        let (mut tok, mut lit) = self.consume(Context::Values);
        if tok == Token::DoesNotExist {
            does_not_exist = true;
            (tok, lit) = self.consume(Context::Values);
        }
        if tok != Token::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        let errs = is_qualified_name(&lit);
        if !errs.is_empty() {
            // Upstream validates with the parser's path, which is nil: `<nil>: Invalid value`.
            return Err(format!(
                "<nil>: Invalid value: {lit:?}: {}",
                errs.join("; ")
            ));
        }
        let (next, _) = self.lookahead(Context::Values);
        // `!key` is DoesNotExist whatever follows (upstream leaves what follows to `parse`,
        // which reports it: `!a=b` is "found '=', expected: ',' or 'end of string'").
        let op = if does_not_exist {
            Some("DoesNotExist")
        } else if matches!(next, Token::EndOfString | Token::Comma) {
            Some("Exists")
        } else {
            None
        };
        Ok((lit, op))
    }

    fn parse_operator(&mut self) -> Result<&'static str, String> {
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        Ok(match tok {
            Token::In => "In",
            Token::Equals | Token::DoubleEquals => "In=",
            Token::GreaterThan => "Gt",
            Token::LessThan => "Lt",
            Token::NotIn => "NotIn",
            Token::NotEquals => "NotIn=",
            _ => return Err(format!("found '{lit}', expected: {BINARY_OPERATORS}")),
        })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let s = self.parse_identifiers_list()?;
                let (t, _) = self.consume(Context::Values);
                if t != Token::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(s)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, String> {
        let mut s: Vec<String> = Vec::new();
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Token::Identifier => {
                    s.push(lit);
                    let (t2, l2) = self.lookahead(Context::Values);
                    match t2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(s),
                        _ => return Err(format!("found '{l2}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if s.is_empty() {
                        s.push(String::new());
                    }
                    let (t2, _) = self.lookahead(Context::Values);
                    if t2 == Token::ClosedPar {
                        s.push(String::new());
                        return Ok(s);
                    }
                    if t2 == Token::Comma {
                        s.push(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, String> {
        let (tok, _) = self.lookahead(Context::Values);
        if matches!(tok, Token::EndOfString | Token::Comma) {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Token::Identifier {
            return Ok(vec![lit]);
        }
        Err(format!("found '{lit}', expected: identifier"))
    }
}

/// Upstream `NewRequirement` (with the parser's nil path): the key, the value count for the
/// operator, integer values for `Gt`/`Lt`, each value a label value; errors aggregated as
/// `utilerrors.NewAggregate` prints them (one error alone, several as `[a, b]`). `In=` and
/// `NotIn=` are the exact-match forms (`=`, `==`, `!=`): one value.
fn new_requirement(
    key: &str,
    op: &str,
    values: Vec<String>,
) -> Result<LabelSelectorRequirement, String> {
    let mut values = values;
    values.sort();
    values.dedup();
    let mut errs: Vec<String> = Vec::new();
    let key_errs = is_qualified_name(key);
    if !key_errs.is_empty() {
        errs.push(format!(
            "key: Invalid value: {key:?}: {}",
            key_errs.join("; ")
        ));
    }
    let json = |v: &[String]| serde_json::to_string(v).unwrap_or_default();
    match op {
        "In" | "NotIn" if values.is_empty() => errs.push(format!(
            "values: Invalid value: {}: for 'in', 'notin' operators, values set can't be empty",
            json(&values)
        )),
        "In=" | "NotIn=" if values.len() != 1 => errs.push(format!(
            "values: Invalid value: {}: exact-match compatibility requires one single value",
            json(&values)
        )),
        "Gt" | "Lt" => {
            if values.len() != 1 {
                errs.push(format!(
                    "values: Invalid value: {}: for 'Gt', 'Lt' operators, exactly one value is required",
                    json(&values)
                ));
            }
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(format!(
                        "values[{i}]: Invalid value: {v:?}: for 'Gt', 'Lt' operators, the value must be an integer"
                    ));
                }
            }
        }
        _ => {}
    }
    for (i, v) in values.iter().enumerate() {
        let e = is_label_value(v);
        if !e.is_empty() {
            errs.push(format!(
                "values[{i}][{key}]: Invalid value: {v:?}: {}",
                e.join("; ")
            ));
        }
    }
    errs.dedup();
    match errs.len() {
        0 => Ok(LabelSelectorRequirement {
            key: key.to_string(),
            operator: op.trim_end_matches('=').to_string(),
            values,
        }),
        1 => Err(errs.remove(0)),
        _ => Err(format!("[{}]", errs.join(", "))),
    }
}

/// Upstream `labels.Parse`: the requirements, sorted by key.
pub(super) fn parse(s: &str) -> Result<LabelSelector, String> {
    let mut p = Parser {
        items: scan(s),
        position: 0,
    };
    // A lexer error token is never an identifier, so the parser reports it where it stands
    // (upstream does the same: the token's literal is the lexer's message).
    let mut reqs = p.parse()?;
    reqs.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(LabelSelector {
        match_labels: Default::default(),
        match_expressions: reqs,
    })
}
