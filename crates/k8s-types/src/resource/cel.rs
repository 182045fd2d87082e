//! DRA's CEL device selectors, as `k8s.io/dynamic-resource-allocation/cel` (`compile.go`)
//! defines them, evaluated by the `cel` crate (cel-rust).
//!
//! The environment has one variable, `device`, with `driver` (string),
//! `allowMultipleAllocations` (bool), `attributes` and `capacity`: maps from a domain
//! (`gpu.nvidia.com`) to maps from an id (`productName`) to the value. A qualified name without a
//! domain (`productName`) belongs to the device's driver, as upstream's `parseQualifiedName`
//! splits it. Attribute values are ints, bools, strings and versions; capacities are
//! Kubernetes quantities with the Kubernetes CEL library's member functions `compareTo`,
//! `isGreaterThan`, `isLessThan`, `asInteger`, `asApproximateFloat`, `sign` and `isInteger`
//! (upstream `k8s.io/apiserver/pkg/cel/library/quantity.go`), and `quantity("40Gi")` makes one.
//! Versions are semver values with `compareTo`, `isGreaterThan`, `isLessThan` and `major`,
//! `minor`, `patch` (upstream `library/semverlib.go`); `semver("1.2.3")` makes one.
//!
//! Upstream gives every domain a default empty map, so `device.attributes["other.com"]` is an
//! empty map rather than an error; k8s-mini adds an empty map for each string literal of the
//! expression that is not a domain of the device, which gives the same answers for the
//! `device.attributes["<domain>"].<id>` and `"<id>" in device.attributes["<domain>"]` forms.
//! Not done: CEL's type checking at compile time (a selector that compiles but reads a missing
//! attribute fails when evaluated, upstream catches some of these at validation) and the cost
//! limit (`CELSelectorExpressionMaxCost`): docs/fidelity.md.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use cel::extractors::This;
use cel::objects::{Opaque, Value};
use cel::{Context, ExecutionError, Program};

use super::Device;
use crate::quantity::Quantity;

/// A compiled selector.
pub struct CelSelector {
    program: Program,
    literals: Vec<String>,
}

impl std::fmt::Debug for CelSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CelSelector").finish_non_exhaustive()
    }
}

/// A `resource.Quantity` as a CEL value.
#[derive(Debug, PartialEq, Eq)]
struct CelQuantity(Quantity);

impl Opaque for CelQuantity {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Quantity"
    }
}

/// A semantic version (major.minor.patch, pre-release) as a CEL value.
#[derive(Debug, PartialEq, Eq)]
struct Semver {
    core: [u64; 3],
    pre: Option<String>,
}

impl Opaque for Semver {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Semver"
    }
}

impl Semver {
    /// Parses `MAJOR.MINOR.PATCH[-PRE][+BUILD]`.
    fn parse(s: &str) -> Option<Semver> {
        let s = s.split_once('+').map(|(v, _)| v).unwrap_or(s);
        let (core, pre) = match s.split_once('-') {
            Some((c, p)) => (c, Some(p.to_string())),
            None => (s, None),
        };
        let mut parts = core.split('.');
        let mut out = [0u64; 3];
        for slot in &mut out {
            *slot = parts.next()?.parse().ok()?;
        }
        if parts.next().is_some() {
            return None;
        }
        Some(Semver { core: out, pre })
    }

    /// Semver 2.0.0 precedence: the core numbers, then a version with a pre-release is lower
    /// (pre-releases compared as strings: a simplification of the per-identifier rule).
    fn cmp(&self, o: &Semver) -> Ordering {
        self.core
            .cmp(&o.core)
            .then_with(|| match (&self.pre, &o.pre) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(a), Some(b)) => a.cmp(b),
            })
    }
}

fn opaque_of<'a, T: 'static>(v: &'a Value, what: &str) -> Result<&'a T, String> {
    match v {
        Value::Opaque(o) => o
            .downcast_ref::<T>()
            .ok_or_else(|| format!("expected a {what}")),
        _ => Err(format!("expected a {what}")),
    }
}

/// `a.compareTo(b)` for two quantities or two versions.
fn ordering(this: &Value, other: &Value) -> Result<Ordering, String> {
    if let Ok(a) = opaque_of::<CelQuantity>(this, "quantity") {
        let b = opaque_of::<CelQuantity>(other, "quantity")?;
        return Ok(a.0.cmp(&b.0));
    }
    let a = opaque_of::<Semver>(this, "quantity or semver")?;
    let b = opaque_of::<Semver>(other, "semver")?;
    Ok(a.cmp(b))
}

type CelResult<T> = Result<T, ExecutionError>;

fn fail(name: &str, msg: String) -> ExecutionError {
    ExecutionError::function_error(name, msg)
}

fn quantity_fn(s: Arc<String>) -> CelResult<Value> {
    Quantity::parse(&s)
        .map(|q| Value::Opaque(Arc::new(CelQuantity(q))))
        .map_err(|e| fail("quantity", e.to_string()))
}

fn semver_fn(s: Arc<String>) -> CelResult<Value> {
    Semver::parse(&s)
        .map(|v| Value::Opaque(Arc::new(v)))
        .ok_or_else(|| fail("semver", format!("invalid semver {s:?}")))
}

fn compare_to(This(this): This<Value>, other: Value) -> CelResult<i64> {
    ordering(&this, &other)
        .map(|o| o as i64)
        .map_err(|e| fail("compareTo", e))
}

fn is_greater_than(This(this): This<Value>, other: Value) -> CelResult<bool> {
    ordering(&this, &other)
        .map(|o| o == Ordering::Greater)
        .map_err(|e| fail("isGreaterThan", e))
}

fn is_less_than(This(this): This<Value>, other: Value) -> CelResult<bool> {
    ordering(&this, &other)
        .map(|o| o == Ordering::Less)
        .map_err(|e| fail("isLessThan", e))
}

fn as_integer(This(this): This<Value>) -> CelResult<i64> {
    let q = opaque_of::<CelQuantity>(&this, "quantity").map_err(|e| fail("asInteger", e))?;
    Ok(q.0.value())
}

fn as_approximate_float(This(this): This<Value>) -> CelResult<f64> {
    let q =
        opaque_of::<CelQuantity>(&this, "quantity").map_err(|e| fail("asApproximateFloat", e))?;
    Ok(q.0.milli_value() as f64 / 1000.0)
}

fn sign(This(this): This<Value>) -> CelResult<i64> {
    let q = opaque_of::<CelQuantity>(&this, "quantity").map_err(|e| fail("sign", e))?;
    Ok(q.0.milli_value().signum())
}

fn is_integer(This(this): This<Value>) -> CelResult<bool> {
    let q = opaque_of::<CelQuantity>(&this, "quantity").map_err(|e| fail("isInteger", e))?;
    Ok(q.0.milli_value() % 1000 == 0)
}

fn version_part(this: &Value, i: usize, name: &str) -> CelResult<i64> {
    let v = opaque_of::<Semver>(this, "semver").map_err(|e| fail(name, e))?;
    Ok(i64::try_from(v.core[i]).unwrap_or(i64::MAX))
}

fn major(This(this): This<Value>) -> CelResult<i64> {
    version_part(&this, 0, "major")
}

fn minor(This(this): This<Value>) -> CelResult<i64> {
    version_part(&this, 1, "minor")
}

fn patch(This(this): This<Value>) -> CelResult<i64> {
    version_part(&this, 2, "patch")
}

/// The string literals of an expression (`"..."` or `'...'`, without escapes), for the default
/// empty domain maps.
fn string_literals(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = expr.chars();
    while let Some(c) = chars.next() {
        if c == '"' || c == '\'' {
            let lit: String = chars.by_ref().take_while(|d| *d != c).collect();
            if !lit.is_empty() && !out.contains(&lit) {
                out.push(lit);
            }
        }
    }
    out
}

/// Splits a qualified name into domain and id; a name without a domain belongs to `driver`
/// (upstream `parseQualifiedName`).
pub fn parse_qualified_name<'a>(name: &'a str, driver: &'a str) -> (&'a str, &'a str) {
    match name.split_once('/') {
        Some((d, id)) => (d, id),
        None => (driver, name),
    }
}

impl CelSelector {
    /// Compiles an expression; the error is the parser's message (upstream's validation
    /// reports it as `Invalid value: "<expr>": compilation failed: ...`).
    pub fn compile(expression: &str) -> Result<CelSelector, String> {
        let program = Program::compile(expression).map_err(|e| e.to_string())?;
        Ok(CelSelector {
            program,
            literals: string_literals(expression),
        })
    }

    /// Whether the device of `driver` matches (upstream `CompilationResult.DeviceMatches`). An
    /// evaluation error or a result that is not a bool is an error.
    pub fn device_matches(&self, driver: &str, device: &Device) -> Result<bool, String> {
        let mut attributes: HashMap<String, HashMap<String, Value>> = HashMap::new();
        for (name, attr) in &device.attributes {
            let (domain, id) = parse_qualified_name(name, driver);
            let value = if let Some(i) = attr.int {
                Value::Int(i)
            } else if let Some(b) = attr.bool {
                Value::Bool(b)
            } else if let Some(s) = &attr.string {
                Value::String(Arc::new(s.clone()))
            } else if let Some(v) = &attr.version {
                let parsed = Semver::parse(v)
                    .ok_or_else(|| format!("attribute {name}: parse semantic version: {v}"))?;
                Value::Opaque(Arc::new(parsed))
            } else {
                return Err(format!("attribute {name}: unsupported attribute value"));
            };
            attributes
                .entry(domain.to_string())
                .or_default()
                .insert(id.to_string(), value);
        }
        let mut capacity: HashMap<String, HashMap<String, Value>> = HashMap::new();
        for (name, cap) in &device.capacity {
            let (domain, id) = parse_qualified_name(name, driver);
            capacity.entry(domain.to_string()).or_default().insert(
                id.to_string(),
                Value::Opaque(Arc::new(CelQuantity(cap.value.clone()))),
            );
        }
        for lit in &self.literals {
            attributes.entry(lit.clone()).or_default();
            capacity.entry(lit.clone()).or_default();
        }
        let mut dev: HashMap<String, Value> = HashMap::new();
        dev.insert("driver".into(), Value::String(Arc::new(driver.to_string())));
        dev.insert(
            "allowMultipleAllocations".into(),
            Value::Bool(device.allow_multiple_allocations.unwrap_or(false)),
        );
        dev.insert("attributes".into(), nested(attributes));
        dev.insert("capacity".into(), nested(capacity));
        let mut ctx = Context::default();
        register(&mut ctx);
        ctx.add_variable_from_value("device", Value::from(dev));
        match self.program.execute(&ctx) {
            Ok(Value::Bool(b)) => Ok(b),
            Ok(other) => Err(format!(
                "CEL result of type {:?} could not be converted to bool",
                other.type_of()
            )),
            Err(e) => Err(e.to_string()),
        }
    }
}

fn nested(m: HashMap<String, HashMap<String, Value>>) -> Value {
    let outer: HashMap<String, Value> = m.into_iter().map(|(k, v)| (k, Value::from(v))).collect();
    Value::from(outer)
}

fn register(ctx: &mut Context) {
    // The names are Kubernetes' CEL library's; none is a standard overload, so adding them
    // cannot fail (the results are ignored on purpose: a conflict would only mean the
    // standard library already answers the name).
    let _ = ctx.add_function("quantity", quantity_fn);
    let _ = ctx.add_function("semver", semver_fn);
    let _ = ctx.add_function("compareTo", compare_to);
    let _ = ctx.add_function("isGreaterThan", is_greater_than);
    let _ = ctx.add_function("isLessThan", is_less_than);
    let _ = ctx.add_function("asInteger", as_integer);
    let _ = ctx.add_function("asApproximateFloat", as_approximate_float);
    let _ = ctx.add_function("sign", sign);
    let _ = ctx.add_function("isInteger", is_integer);
    let _ = ctx.add_function("major", major);
    let _ = ctx.add_function("minor", minor);
    let _ = ctx.add_function("patch", patch);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::{DeviceAttribute, DeviceCapacity};

    /// An H100 as the NVIDIA DRA driver publishes it (attributes and memory capacity of
    /// k8s-dra-driver-gpu's `gpu` devices).
    fn h100() -> Device {
        let mut d = Device {
            name: "gpu-0".into(),
            ..Device::default()
        };
        d.attributes.insert(
            "productName".into(),
            DeviceAttribute::string("NVIDIA H100 80GB HBM3"),
        );
        d.attributes
            .insert("type".into(), DeviceAttribute::string("gpu"));
        d.attributes.insert("index".into(), DeviceAttribute::int(0));
        d.attributes.insert(
            "driverVersion".into(),
            DeviceAttribute::version("550.54.15"),
        );
        d.capacity.insert(
            "memory".into(),
            DeviceCapacity {
                value: Quantity::parse("80Gi").unwrap(),
                request_policy: None,
            },
        );
        d
    }

    fn eval(expr: &str) -> Result<bool, String> {
        CelSelector::compile(expr)?.device_matches("gpu.nvidia.com", &h100())
    }

    #[test]
    fn selectors_over_attributes_and_capacity() {
        assert_eq!(eval(r#"device.driver == "gpu.nvidia.com""#), Ok(true));
        assert_eq!(
            eval(r#"device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3""#),
            Ok(true)
        );
        assert_eq!(
            eval(
                r#"device.attributes["gpu.nvidia.com"].type == "gpu" && device.attributes["gpu.nvidia.com"].index == 0"#
            ),
            Ok(true)
        );
        // 80Gi against 40Gi: greater, compareTo gives 1; against 80Gi: 0; 100Gi: -1.
        assert_eq!(
            eval(r#"device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0"#),
            Ok(true)
        );
        assert_eq!(
            eval(r#"device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) == 0"#),
            Ok(true)
        );
        assert_eq!(
            eval(r#"device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("100Gi"))"#),
            Ok(false)
        );
        // 550.54.15 > 535.0.0.
        assert_eq!(
            eval(
                r#"device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("535.0.0"))"#
            ),
            Ok(true)
        );
        // A domain no device has is an empty map, as upstream's default.
        assert_eq!(
            eval(r#""model" in device.attributes["dra.example.com"]"#),
            Ok(false)
        );
        assert_eq!(
            eval(r#"device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA A100")"#),
            Ok(false)
        );
    }

    #[test]
    fn errors_are_reported() {
        assert!(CelSelector::compile("device.driver ==").is_err());
        assert!(eval(r#"device.attributes["gpu.nvidia.com"].nosuch == 1"#).is_err());
        assert!(eval(r#"device.driver"#)
            .unwrap_err()
            .contains("could not be converted to bool"));
    }
}
