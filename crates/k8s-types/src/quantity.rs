//! `resource.Quantity`: the fixed-point number Kubernetes uses for CPU, memory, storage and
//! extended resources (`cpu: 500m`, `memory: 1Gi`, `nvidia.com/gpu: 1`).
//!
//! Upstream: `k8s.io/apimachinery/pkg/api/resource` (`quantity.go`, `suffix.go`, `amount.go` in
//! `kubernetes/kubernetes` under `staging/src/k8s.io/apimachinery/pkg/api/resource/`). This module
//! mirrors upstream's scanner (`parseQuantityString`), suffix table (`suffix.go`), rounding
//! (`ParseQuantity`: anything finer than a nano-unit is rounded *up*, away from zero), BinarySI cap
//! (2^63-1), canonical printing (`CanonicalizeBytes`) and integer accessors (`Value`,
//! `MilliValue`).
//!
//! # Grammar
//!
//! ```text
//! <quantity>        ::= <signedNumber><suffix>
//! <signedNumber>    ::= <number> | <sign><number>
//! <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
//! <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
//! <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei                (powers of 1024)
//! <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E      (powers of 1000)
//! <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>    (integer exponent)
//! ```
//!
//! # Representation and limits
//!
//! A [`Quantity`] is an `i128` count of nano-units (10^-9) plus the [`Format`] it was written in.
//! Every quantity upstream can hold after parsing has at most nano precision, so this is exact
//! for everything Kubernetes users write: milli-CPU, byte-precise memory up to the BinarySI cap
//! of 2^63-1 bytes (just under `8Ei`), and decimal values up to `i128::MAX` nano-units,
//! about 1.7 × 10^29 (so `1e18`, `12E`, `1e28` are all exact).
//!
//! Where this differs from upstream (which falls back to an arbitrary-precision `inf.Dec`):
//! - a DecimalSI / DecimalExponent quantity whose magnitude exceeds ~1.7 × 10^29 (e.g.
//!   `1e30`, `1e999999999`) is rejected with [`QuantityError::OutOfRange`] instead of being
//!   held exactly; BinarySI values never hit this because upstream caps them at 2^63-1;
//! - [`Quantity::add`] / [`Quantity::sub`] saturate at ±`i128::MAX` nano-units;
//! - exponents are handled as exact 64-bit integers (upstream truncates them to 32 bits);
//! - a string with no digit and no `.` before the suffix (`"-"`, `"+"`, `"Ki"`, `"-m"`) is a
//!   syntax error, as upstream's documented pattern says; upstream's scanner reads it as 0;
//! - BinarySI printing stops at `Ei` (2^70 prints `1024Ei`; upstream would drop the suffix).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{AddAssign, SubAssign};
use std::str::FromStr;

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::ser::{Serialize, Serializer};

/// Nano-units per unit (the internal resolution).
const NANOS_PER_UNIT: i128 = 1_000_000_000;

/// Nano-units per milli-unit.
const NANOS_PER_MILLI: i128 = 1_000_000;

/// Upstream `maxAllowed` (2^63-1 units) in nano-units: the cap applied to parsed BinarySI values.
const BINARY_SI_MAX_NANOS: i128 = (i64::MAX as i128) * NANOS_PER_UNIT;

/// Upstream `splitREString`: the pattern quoted by the syntax error message.
pub const QUANTITY_PATTERN: &str = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";

/// Characters upstream's scanner accepts as suffix letters.
const SUFFIX_LETTERS: &[u8] = b"eEinumkKMGTP";

/// BinarySI suffixes by power of 1024 (index 0 has no suffix).
const BINARY_SUFFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// How a quantity is written back out (upstream `resource.Format`). It is remembered from the
/// parsed suffix and steers [`Quantity`]'s canonical string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Base-10 exponent notation, e.g. `12e6` (`"DecimalExponent"` upstream).
    DecimalExponent,
    /// Powers of 1024, e.g. `12Mi` = 12 × 2^20 (`"BinarySI"` upstream).
    BinarySI,
    /// Powers of 1000, e.g. `12M` = 12 × 10^6, `500m` = 0.5 (`"DecimalSI"` upstream).
    DecimalSI,
}

impl Format {
    /// The upstream spelling of the format: `"DecimalExponent"`, `"BinarySI"` or `"DecimalSI"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::DecimalExponent => "DecimalExponent",
            Format::BinarySI => "BinarySI",
            Format::DecimalSI => "DecimalSI",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a string is not a quantity. Every message starts with `invalid quantity "<input>"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// Bad syntax: empty string, no digits, stray characters, whitespace, a second `.`
    /// (upstream `ErrFormatWrong`).
    #[error(
        "invalid quantity \"{input}\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )]
    Format {
        /// The rejected input.
        input: String,
    },
    /// Well-formed but the suffix is unknown, e.g. `1i`, `1mi`, `1e`, `1ki`, `1e-`
    /// (upstream `ErrSuffix`).
    #[error("invalid quantity \"{input}\": unable to parse quantity's suffix")]
    Suffix {
        /// The rejected input.
        input: String,
    },
    /// A DecimalSI / DecimalExponent value too large for this implementation (magnitude above
    /// `i128::MAX` nano-units, about 1.7e29). Upstream would hold it in an arbitrary-precision
    /// decimal; no Kubernetes resource comes near this.
    #[error("invalid quantity \"{input}\": magnitude exceeds the supported range (about 1.7e29)")]
    OutOfRange {
        /// The rejected input.
        input: String,
    },
}

impl QuantityError {
    /// The input that failed to parse.
    pub fn input(&self) -> &str {
        match self {
            QuantityError::Format { input }
            | QuantityError::Suffix { input }
            | QuantityError::OutOfRange { input } => input,
        }
    }
}

/// A fixed-point quantity (upstream `resource.Quantity`): an exact count of nano-units plus the
/// [`Format`] to print it in.
///
/// Equality, ordering and hashing are by value only: `"1"`, `"1000m"` and `"1e0"` are equal.
/// [`Display`](fmt::Display) gives the canonical string (upstream `String()`), which is also what
/// [`Serialize`] writes. See the [module docs](self) for the representation's limits.
#[derive(Clone, Debug)]
pub struct Quantity {
    /// The value in units of 10^-9.
    nanos: i128,
    /// The format used for printing.
    format: Format,
}

/// A suffix's multiplier.
#[derive(Clone, Copy)]
enum Multiplier {
    /// 10^n.
    Pow10(i64),
    /// 2^n (n is 10..=60).
    Pow2(u32),
}

/// Parse failure without the input attached.
#[derive(Clone, Copy)]
enum Failure {
    Format,
    Suffix,
    OutOfRange,
}

impl Failure {
    fn with_input(self, input: &str) -> QuantityError {
        let input = input.to_owned();
        match self {
            Failure::Format => QuantityError::Format { input },
            Failure::Suffix => QuantityError::Suffix { input },
            Failure::OutOfRange => QuantityError::OutOfRange { input },
        }
    }
}

/// Upstream `suffixer.interpret`: the multiplier and format for a suffix, or `None` if unknown.
fn interpret_suffix(suffix: &[u8]) -> Option<(Multiplier, Format)> {
    use Format::{BinarySI, DecimalExponent, DecimalSI};
    use Multiplier::{Pow10, Pow2};
    let interpreted = match suffix {
        b"" => (Pow10(0), DecimalSI),
        b"n" => (Pow10(-9), DecimalSI),
        b"u" => (Pow10(-6), DecimalSI),
        b"m" => (Pow10(-3), DecimalSI),
        b"k" => (Pow10(3), DecimalSI),
        b"M" => (Pow10(6), DecimalSI),
        b"G" => (Pow10(9), DecimalSI),
        b"T" => (Pow10(12), DecimalSI),
        b"P" => (Pow10(15), DecimalSI),
        b"E" => (Pow10(18), DecimalSI),
        b"Ki" => (Pow2(10), BinarySI),
        b"Mi" => (Pow2(20), BinarySI),
        b"Gi" => (Pow2(30), BinarySI),
        b"Ti" => (Pow2(40), BinarySI),
        b"Pi" => (Pow2(50), BinarySI),
        b"Ei" => (Pow2(60), BinarySI),
        [b'e' | b'E', rest @ ..] if !rest.is_empty() => (Pow10(parse_i64(rest)?), DecimalExponent),
        _ => return None,
    };
    Some(interpreted)
}

/// Go's `strconv.ParseInt(s, 10, 64)`: optional sign, at least one digit, fits an `i64`.
fn parse_i64(s: &[u8]) -> Option<i64> {
    let (negative, digits) = match s {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let mut acc: i128 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        acc = acc * 10 + i128::from(c - b'0');
        if acc > i128::from(i64::MAX) + 1 {
            return None;
        }
    }
    let value = if negative { -acc } else { acc };
    i64::try_from(value).ok()
}

/// Multiplies a big-endian vector of decimal digits by `m` in place.
fn mul_digits(digits: &mut Vec<u8>, m: u64) {
    let mut carry: u128 = 0;
    for d in digits.iter_mut().rev() {
        let v = u128::from(*d) * u128::from(m) + carry;
        *d = (v % 10) as u8;
        carry = v / 10;
    }
    let mut prefix = Vec::new();
    while carry > 0 {
        prefix.push((carry % 10) as u8);
        carry /= 10;
    }
    prefix.reverse();
    digits.splice(0..0, prefix);
}

/// The `i128` value of big-endian decimal digits, or `None` on overflow.
fn digits_to_i128(digits: &[u8]) -> Option<i128> {
    if digits.len() > 39 {
        return None;
    }
    digits.iter().try_fold(0i128, |acc, &d| {
        acc.checked_mul(10)?.checked_add(i128::from(d))
    })
}

/// The magnitude in nano-units of `int.frac × multiplier`, rounded up to a whole nano-unit
/// (upstream `inf.RoundUp` at scale 9). `None` if it does not fit an `i128`.
fn magnitude_nanos(int: &[u8], frac: &[u8], multiplier: Multiplier) -> Option<i128> {
    let mut digits: Vec<u8> = int
        .iter()
        .chain(frac)
        .map(|c| c - b'0')
        .skip_while(|&d| d == 0)
        .collect();
    if digits.is_empty() {
        return Some(0);
    }
    // value = digits × 10^(exp10 - frac.len()) × 2^exp2; in nano-units: × 10^9.
    let (exp10, exp2) = match multiplier {
        Multiplier::Pow10(e) => (e, 0),
        Multiplier::Pow2(e) => (0, e),
    };
    if exp2 > 0 {
        mul_digits(&mut digits, 1u64 << exp2);
    }
    let len = digits.len() as i128;
    let p = i128::from(exp10) + 9 - frac.len() as i128;
    if p >= 0 {
        if len + p > 39 {
            return None;
        }
        digits_to_i128(&digits)?.checked_mul(10i128.checked_pow(p as u32)?)
    } else {
        let k = -p;
        if k >= len {
            // 0 < value < 1 nano-unit: rounds up to 1n.
            return Some(1);
        }
        let (whole, rest) = digits.split_at((len - k) as usize);
        let whole = digits_to_i128(whole)?;
        if rest.iter().any(|&d| d != 0) {
            whole.checked_add(1)
        } else {
            Some(whole)
        }
    }
}

/// Upstream `ParseQuantity` on bytes.
fn parse_bytes(b: &[u8]) -> Result<Quantity, Failure> {
    let end = b.len();
    if end == 0 {
        return Err(Failure::Format);
    }
    let mut pos = 0;
    let negative = match b[0] {
        b'-' => {
            pos = 1;
            true
        }
        b'+' => {
            pos = 1;
            false
        }
        _ => false,
    };

    // The number: digits, optionally '.' and more digits.
    let number_start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    let int = &b[number_start..pos];
    let mut frac: &[u8] = &[];
    if pos < end && b[pos] == b'.' {
        pos += 1;
        let frac_start = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        frac = &b[frac_start..pos];
    }
    // Upstream's scanner reads a missing number as 0 ("-", "+", "Ki"); its documented pattern
    // requires at least one digit or '.', which is what we enforce.
    if pos == number_start {
        return Err(Failure::Format);
    }

    // The suffix: letters, then an optional sign and digits (for exponents).
    let suffix_start = pos;
    while pos < end && SUFFIX_LETTERS.contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && matches!(b[pos], b'+' | b'-') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos != end {
        return Err(Failure::Format);
    }
    let (multiplier, mut format) = interpret_suffix(&b[suffix_start..]).ok_or(Failure::Suffix)?;

    let magnitude = match magnitude_nanos(int, frac, multiplier) {
        Some(m) => m,
        None if format == Format::BinarySI => BINARY_SI_MAX_NANOS,
        None => return Err(Failure::OutOfRange),
    };
    let magnitude = if format == Format::BinarySI {
        // Upstream caps BinarySI at maxAllowed (2^63-1) and reports values strictly between
        // 0 and 1 as DecimalSI ("This avoids rounding and hopefully confusion, too.").
        let capped = magnitude.min(BINARY_SI_MAX_NANOS);
        if capped > 0 && capped < NANOS_PER_UNIT {
            format = Format::DecimalSI;
        }
        capped
    } else {
        magnitude
    };
    let nanos = if negative { -magnitude } else { magnitude };
    Ok(Quantity { nanos, format })
}

/// Keeps a value inside ±`i128::MAX` so that negation never overflows.
fn symmetric(nanos: i128) -> i128 {
    nanos.max(-i128::MAX)
}

/// `nanos / divisor`, rounded away from zero, saturated to `i64` (upstream `AsScaledInt64`).
fn scaled_away_from_zero(nanos: i128, divisor: i128) -> i64 {
    let quotient = nanos / divisor;
    let remainder = nanos % divisor;
    let rounded = match remainder.cmp(&0) {
        Ordering::Greater => quotient + 1,
        Ordering::Less => quotient - 1,
        Ordering::Equal => quotient,
    };
    rounded.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

impl Quantity {
    /// Parses a quantity string (upstream `ParseQuantity`), e.g. `"500m"`, `"1.5Gi"`, `"1e3"`,
    /// `"-2"`, `".5"`.
    ///
    /// Digits finer than a nano-unit are rounded up, away from zero (`"0.1n"` -> `1n`,
    /// `"-3.001n"` -> `-4n`). BinarySI values are capped at 2^63-1 (`"9Ei"` ->
    /// `9223372036854775807`), and a BinarySI value strictly between -1 and 1 becomes DecimalSI.
    /// Leading/trailing whitespace is an error (as upstream; [`Deserialize`] trims first).
    ///
    /// # Errors
    /// [`QuantityError::Format`] for bad syntax (`""`, `"-"`, `"1.5.5"`, `"1 Gi"`, `"1Gb"`),
    /// [`QuantityError::Suffix`] for an unknown suffix (`"1i"`, `"1e"`, `"1ki"`),
    /// [`QuantityError::OutOfRange`] for a decimal magnitude above ~1.7e29 (`"1e30"`).
    pub fn parse(s: &str) -> Result<Quantity, QuantityError> {
        parse_bytes(s.as_bytes()).map_err(|failure| failure.with_input(s))
    }

    /// `milli / 1000` units in `format` (upstream `NewMilliQuantity`), e.g.
    /// `from_milli(1500, DecimalSI)` prints `1500m`.
    pub fn from_milli(milli: i64, format: Format) -> Quantity {
        Quantity {
            nanos: i128::from(milli) * NANOS_PER_MILLI,
            format,
        }
    }

    /// `value` units in `format` (upstream `NewQuantity`), e.g.
    /// `from_value(8 * 1024 * 1024 * 1024, BinarySI)` prints `8Gi`.
    pub fn from_value(value: i64, format: Format) -> Quantity {
        Quantity {
            nanos: i128::from(value) * NANOS_PER_UNIT,
            format,
        }
    }

    /// `nanos × 10^-9` units in `format` (clamped to ±`i128::MAX`).
    pub fn from_nanos(nanos: i128, format: Format) -> Quantity {
        Quantity {
            nanos: symmetric(nanos),
            format,
        }
    }

    /// Zero, in DecimalSI (what upstream's `MustParse("0")` gives); prints `0`.
    pub fn zero() -> Quantity {
        Quantity {
            nanos: 0,
            format: Format::DecimalSI,
        }
    }

    /// The exact value in nano-units (10^-9 units).
    pub fn nano_value(&self) -> i128 {
        self.nanos
    }

    /// The value in milli-units, `value × 1000` rounded away from zero (upstream `MilliValue()`:
    /// `"1.5"` -> 1500, `"1u"` -> 1, `"-1u"` -> -1), saturated at the `i64` bounds.
    pub fn milli_value(&self) -> i64 {
        scaled_away_from_zero(self.nanos, NANOS_PER_MILLI)
    }

    /// The value in units, rounded away from zero (upstream `Value()`: `"1.5"` -> 2,
    /// `"-1.5"` -> -2, `"100m"` -> 1), saturated at the `i64` bounds.
    pub fn value(&self) -> i64 {
        scaled_away_from_zero(self.nanos, NANOS_PER_UNIT)
    }

    /// The format the quantity prints in (remembered from parsing or construction).
    pub fn format(&self) -> Format {
        self.format
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    /// Whether the value is below zero.
    pub fn is_negative(&self) -> bool {
        self.nanos < 0
    }

    /// Adds `other` in place (upstream `Add`). Keeps `self`'s format, except that a zero `self`
    /// takes `other`'s format (so `0 + 1Gi` prints `1Gi`). Saturates at ±`i128::MAX` nano-units.
    pub fn add(&mut self, other: &Quantity) {
        if self.nanos == 0 {
            self.format = other.format;
        }
        self.nanos = symmetric(self.nanos.saturating_add(other.nanos));
    }

    /// Subtracts `other` in place (upstream `Sub`). Keeps `self`'s format, except that a zero
    /// `self` takes `other`'s format. Saturates at ±`i128::MAX` nano-units.
    pub fn sub(&mut self, other: &Quantity) {
        if self.nanos == 0 {
            self.format = other.format;
        }
        self.nanos = symmetric(self.nanos.saturating_sub(other.nanos));
    }

    /// Negates the value in place (upstream `Neg`); the format is kept.
    pub fn neg(&mut self) {
        self.nanos = -self.nanos;
    }

    /// The canonical mantissa and suffix (upstream `CanonicalizeBytes`).
    fn canonical_parts(&self) -> (i128, String) {
        if self.nanos == 0 {
            return (0, String::new());
        }
        let mut format = self.format;
        if format == Format::BinarySI {
            let kibi = 1024 * NANOS_PER_UNIT;
            if self.nanos > -kibi && self.nanos < kibi || self.nanos % NANOS_PER_UNIT != 0 {
                // Small or fractional binary values print as DecimalSI (no rounding).
                format = Format::DecimalSI;
            } else {
                let mut mantissa = self.nanos / NANOS_PER_UNIT;
                let mut power = 0;
                // Upstream strips every factor of 1024 but only has suffixes up to Ei; stopping
                // at Ei keeps values >= 2^70 correct ("1024Ei") instead of dropping the suffix.
                while power < BINARY_SUFFIXES.len() - 1 && mantissa % 1024 == 0 {
                    mantissa /= 1024;
                    power += 1;
                }
                return (mantissa, BINARY_SUFFIXES[power].to_owned());
            }
        }
        // Decimal: strip factors of 10, then lower the exponent to a multiple of 3.
        let mut mantissa = self.nanos;
        let mut exponent: i32 = -9;
        while mantissa % 10 == 0 {
            mantissa /= 10;
            exponent += 1;
        }
        while exponent % 3 != 0 {
            mantissa *= 10;
            exponent -= 1;
        }
        let si = match exponent {
            -9 => Some("n"),
            -6 => Some("u"),
            -3 => Some("m"),
            0 => Some(""),
            3 => Some("k"),
            6 => Some("M"),
            9 => Some("G"),
            12 => Some("T"),
            15 => Some("P"),
            18 => Some("E"),
            _ => None,
        };
        let suffix = match (format, si) {
            (Format::DecimalSI, Some(s)) => s.to_owned(),
            // DecimalExponent, or DecimalSI past "E": exponent notation (upstream falls back the
            // same way so "1000E" prints "1e21").
            _ if exponent == 0 => String::new(),
            _ => format!("e{exponent}"),
        };
        (mantissa, suffix)
    }
}

impl Default for Quantity {
    /// [`Quantity::zero`].
    fn default() -> Quantity {
        Quantity::zero()
    }
}

impl FromStr for Quantity {
    type Err = QuantityError;

    /// Same as [`Quantity::parse`].
    fn from_str(s: &str) -> Result<Quantity, QuantityError> {
        Quantity::parse(s)
    }
}

impl fmt::Display for Quantity {
    /// The canonical form (upstream `String()`): no fractional digits, the largest suffix that
    /// loses no precision, the quantity's own format (`"1.5"` -> `1500m`, `"1024Mi"` -> `1Gi`,
    /// `"1.5Gi"` -> `1536Mi`, `"1000M"` -> `1G`, `"1e3"` -> `1e3`, `"0.5Ki"` -> `512`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (mantissa, suffix) = self.canonical_parts();
        write!(f, "{mantissa}{suffix}")
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Quantity) -> bool {
        self.nanos == other.nanos
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Quantity) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    /// Compares values (upstream `Cmp`); the format is ignored.
    fn cmp(&self, other: &Quantity) -> Ordering {
        self.nanos.cmp(&other.nanos)
    }
}

impl Hash for Quantity {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.nanos.hash(state);
    }
}

impl AddAssign<&Quantity> for Quantity {
    /// Same as [`Quantity::add`].
    fn add_assign(&mut self, other: &Quantity) {
        Quantity::add(self, other);
    }
}

impl SubAssign<&Quantity> for Quantity {
    /// Same as [`Quantity::sub`].
    fn sub_assign(&mut self, other: &Quantity) {
        Quantity::sub(self, other);
    }
}

impl Serialize for Quantity {
    /// Writes the canonical string (upstream `MarshalJSON`).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Quantity {
    /// Accepts a string (trimmed of surrounding whitespace, as upstream `UnmarshalJSON`), an
    /// integer (`cpu: 2`) or a float (`cpu: 0.5`, parsed from its shortest decimal text); `null`
    /// gives zero. Invalid strings fail with the [`QuantityError`] message
    /// (`invalid quantity "<input>": ...`).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Quantity, D::Error> {
        deserializer.deserialize_any(QuantityVisitor)
    }
}

/// Serde visitor for [`Quantity`].
struct QuantityVisitor;

impl<'de> Visitor<'de> for QuantityVisitor {
    type Value = Quantity;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a quantity string such as \"500m\" or \"1Gi\", or a number")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Quantity, E> {
        Quantity::parse(v.trim()).map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Quantity, E> {
        Ok(Quantity::from_value(v, Format::DecimalSI))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Quantity, E> {
        self.visit_str(&v.to_string())
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Quantity, E> {
        self.visit_str(&v.to_string())
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Quantity, E> {
        self.visit_str(&v.to_string())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Quantity, E> {
        // Rust prints finite floats as plain decimals with the shortest round-trip digits
        // (0.1 -> "0.1", 1e21 -> "1000000000000000000000"); NaN/inf fail to parse.
        self.visit_str(&v.to_string())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Quantity, E> {
        Ok(Quantity::zero())
    }

    fn visit_none<E: de::Error>(self) -> Result<Quantity, E> {
        Ok(Quantity::zero())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Quantity, D::Error> {
        deserializer.deserialize_any(QuantityVisitor)
    }
}

#[cfg(test)]
#[cfg(test)]
mod tests;
