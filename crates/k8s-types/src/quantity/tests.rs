use super::Format::{BinarySI, DecimalExponent, DecimalSI};
use super::*;
use std::collections::HashSet;

/// Nano-units of `mantissa × 10^exponent` (upstream test helper `decQuantity`).
fn dq(mantissa: i128, exponent: i32) -> i128 {
    let shift = exponent + 9;
    if shift >= 0 {
        mantissa * 10i128.pow(shift as u32)
    } else {
        let divisor = 10i128.pow((-shift) as u32);
        assert_eq!(mantissa % divisor, 0, "test value finer than nano");
        mantissa / divisor
    }
}

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn canon(s: &str) -> String {
    q(s).to_string()
}

const MAX_ALLOWED: i128 = BINARY_SI_MAX_NANOS;

/// Upstream TestQuantityParse: input -> (value, format), also with "-" and "+" prefixes.
#[test]
fn parse_table_from_upstream() {
    let table: &[(&str, i128, Format)] = &[
        ("0", 0, DecimalSI),
        ("0n", 0, DecimalSI),
        ("0u", 0, DecimalSI),
        ("0m", 0, DecimalSI),
        ("0Ki", 0, BinarySI),
        ("0k", 0, DecimalSI),
        ("0Mi", 0, BinarySI),
        ("0M", 0, DecimalSI),
        ("0Gi", 0, BinarySI),
        ("0G", 0, DecimalSI),
        ("0Ti", 0, BinarySI),
        ("0T", 0, DecimalSI),
        ("1", dq(1, 0), DecimalSI),
        ("1Ki", dq(1024, 0), BinarySI),
        ("8Ki", dq(8 * 1024, 0), BinarySI),
        ("7Mi", dq(7 << 20, 0), BinarySI),
        ("6Gi", dq(6 << 30, 0), BinarySI),
        ("5Ti", dq(5 << 40, 0), BinarySI),
        ("4Pi", dq(4 << 50, 0), BinarySI),
        ("3Ei", dq(3 << 60, 0), BinarySI),
        ("10Ti", dq(10 << 40, 0), BinarySI),
        ("100Ti", dq(100 << 40, 0), BinarySI),
        ("5n", dq(5, -9), DecimalSI),
        ("4u", dq(4, -6), DecimalSI),
        ("3m", dq(3, -3), DecimalSI),
        ("9", dq(9, 0), DecimalSI),
        ("8k", dq(8, 3), DecimalSI),
        ("50k", dq(5, 4), DecimalSI),
        ("7M", dq(7, 6), DecimalSI),
        ("6G", dq(6, 9), DecimalSI),
        ("5T", dq(5, 12), DecimalSI),
        ("40T", dq(4, 13), DecimalSI),
        ("300T", dq(3, 14), DecimalSI),
        ("2P", dq(2, 15), DecimalSI),
        ("1E", dq(1, 18), DecimalSI),
        ("1E-3", dq(1, -3), DecimalExponent),
        ("1e3", dq(1, 3), DecimalExponent),
        ("1E6", dq(1, 6), DecimalExponent),
        ("1e9", dq(1, 9), DecimalExponent),
        ("1E12", dq(1, 12), DecimalExponent),
        ("1e15", dq(1, 15), DecimalExponent),
        ("1E18", dq(1, 18), DecimalExponent),
        ("1e14", dq(1, 14), DecimalExponent),
        ("1e13", dq(1, 13), DecimalExponent),
        ("100.035k", dq(100035, 0), DecimalSI),
        ("0.001", dq(1, -3), DecimalSI),
        ("0.0005k", dq(5, -1), DecimalSI),
        ("0.005", dq(5, -3), DecimalSI),
        ("0.05", dq(5, -2), DecimalSI),
        ("0.5", dq(5, -1), DecimalSI),
        ("0.00050k", dq(5, -1), DecimalSI),
        ("0.00500", dq(5, -3), DecimalSI),
        ("0.05000", dq(5, -2), DecimalSI),
        ("0.50000", dq(5, -1), DecimalSI),
        ("0.5e0", dq(5, -1), DecimalExponent),
        ("0.5e-1", dq(5, -2), DecimalExponent),
        ("0.5e-2", dq(5, -3), DecimalExponent),
        ("10.035M", dq(10035, 3), DecimalSI),
        ("1.2e3", dq(12, 2), DecimalExponent),
        ("1.3E+6", dq(13, 5), DecimalExponent),
        ("1.40e9", dq(14, 8), DecimalExponent),
        ("1.53E12", dq(153, 10), DecimalExponent),
        ("1.6e15", dq(16, 14), DecimalExponent),
        ("1.7E18", dq(17, 17), DecimalExponent),
        ("9.01", dq(901, -2), DecimalSI),
        ("8.1k", dq(81, 2), DecimalSI),
        ("7.123456M", dq(7123456, 0), DecimalSI),
        ("6.987654321G", dq(6987654321, 0), DecimalSI),
        ("5.444T", dq(5444, 9), DecimalSI),
        ("40.1T", dq(401, 11), DecimalSI),
        ("300.2T", dq(3002, 11), DecimalSI),
        ("2.5P", dq(25, 14), DecimalSI),
        ("1.01E", dq(101, 16), DecimalSI),
        // Things that saturate/round.
        ("3.001n", dq(4, -9), DecimalSI),
        ("1.1E-9", dq(2, -9), DecimalExponent),
        ("0.0000000001", dq(1, -9), DecimalSI),
        ("0.0000000005", dq(1, -9), DecimalSI),
        ("0.00000000050", dq(1, -9), DecimalSI),
        ("0.5e-9", dq(1, -9), DecimalExponent),
        ("0.9n", dq(1, -9), DecimalSI),
        ("0.00000012345", dq(124, -9), DecimalSI),
        ("0.00000012354", dq(124, -9), DecimalSI),
        ("9Ei", MAX_ALLOWED, BinarySI),
        ("9223372036854775807Ki", MAX_ALLOWED, BinarySI),
        ("12E", dq(12, 18), DecimalSI),
        // Fractional binary.
        ("100.035Ki", dq(10243584, -2), BinarySI),
        ("0.5Mi", dq(512 * 1024, 0), BinarySI),
        ("0.05Gi", dq(536870912, -1), BinarySI),
        ("0.025Ti", dq(274877906944, -1), BinarySI),
        // Things written by trolls.
        ("0.000000000001Ki", dq(2, -9), DecimalSI),
        (".001", dq(1, -3), DecimalSI),
        (".0001k", dq(100, -3), DecimalSI),
        ("1.", dq(1, 0), DecimalSI),
        ("1.G", dq(1, 9), DecimalSI),
    ];
    for &(input, nanos, format) in table {
        let got = q(input);
        assert_eq!(got.nano_value(), nanos, "{input}");
        assert_eq!(got.format(), format, "{input}");

        let neg = q(&format!("-{input}"));
        assert_eq!(neg.nano_value(), -nanos, "-{input}");
        assert_eq!(neg.format(), format, "-{input}");

        let pos = q(&format!("+{input}"));
        assert_eq!(pos.nano_value(), nanos, "+{input}");
        assert_eq!(pos.format(), format, "+{input}");
    }
}

#[test]
fn invalid_inputs_are_rejected() {
    let format_errors = [
        "",
        "1.1.M",
        "1+1.0M",
        "aoeu",
        " 1",
        "1 ",
        "1.5.5",
        "1 Gi",
        "1Gb",
        "abc",
        "1.1.1",
        "-",
        "+",
        "Ki",
        "-m",
        "1e3.5",
        "1e+-3",
        "1µ",
        "Non-Numeric",
        "--1",
        "1,5",
        "0.1am",
    ];
    for input in format_errors {
        let err = Quantity::parse(input).expect_err(input);
        assert!(
            matches!(err, QuantityError::Format { .. }),
            "{input}: {err:?}"
        );
        assert_eq!(err.input(), input);
    }
    let suffix_errors = [
        "0.1mi",
        ".5i",
        "1i",
        "-3.01i",
        "-3.01e-",
        "1e",
        "1E+",
        "1ki",
        "1Ki3",
        "1nu",
        "1ee3",
        "1-3",
        "1e99999999999999999999",
    ];
    for input in suffix_errors {
        let err = Quantity::parse(input).expect_err(input);
        assert!(
            matches!(err, QuantityError::Suffix { .. }),
            "{input}: {err:?}"
        );
    }
    for input in [
        "1e30",
        "1e999999999",
        "-1e9223372036854775807",
        &"9".repeat(40),
    ] {
        let err = Quantity::parse(input).expect_err(input);
        assert!(
            matches!(err, QuantityError::OutOfRange { .. }),
            "{input}: {err:?}"
        );
    }
}

#[test]
fn error_messages_quote_the_input() {
    assert_eq!(
        Quantity::parse("1.5.5").unwrap_err().to_string(),
        "invalid quantity \"1.5.5\": quantities must match the regular expression \
         '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    );
    assert!(Quantity::parse("1i")
        .unwrap_err()
        .to_string()
        .starts_with("invalid quantity \"1i\": unable to parse quantity's suffix"));
    assert!(Quantity::parse("")
        .unwrap_err()
        .to_string()
        .contains(QUANTITY_PATTERN));
    assert_eq!("1Gb".parse::<Quantity>().unwrap_err().input(), "1Gb");
}

/// Upstream TestQuantityString: (value, format) -> canonical, plus the alternate spelling,
/// and the negated value printing with a leading '-'.
#[test]
fn canonical_string_table_from_upstream() {
    let table: &[(i128, Format, &str, &str)] = &[
        (dq(1 << 30, 0), BinarySI, "1Gi", "1024Mi"),
        (dq(300 << 20, 0), BinarySI, "300Mi", "307200Ki"),
        (dq(6 * 1024, 0), BinarySI, "6Ki", ""),
        (dq(1001 << 30, 0), BinarySI, "1001Gi", "1025024Mi"),
        (dq(1 << 40, 0), BinarySI, "1Ti", "1024Gi"),
        (dq(5, 0), BinarySI, "5", "5000m"),
        (dq(500, -3), BinarySI, "500m", "0.5"),
        (dq(1, 9), DecimalSI, "1G", "1000M"),
        (dq(1000, 6), DecimalSI, "1G", "0.001T"),
        (dq(1000000, 3), DecimalSI, "1G", ""),
        (dq(1000000000, 0), DecimalSI, "1G", ""),
        (dq(1, -3), DecimalSI, "1m", "1000u"),
        (dq(80, -3), DecimalSI, "80m", ""),
        (dq(1080, -3), DecimalSI, "1080m", "1.08"),
        (dq(108, -2), DecimalSI, "1080m", "1080000000n"),
        (dq(10800, -4), DecimalSI, "1080m", ""),
        (dq(300, 6), DecimalSI, "300M", ""),
        (dq(1, 12), DecimalSI, "1T", ""),
        (dq(1, 18), DecimalSI, "1E", ""),
        (dq(1, 21), DecimalSI, "1e21", "1000E"),
        (dq(5, 21), DecimalSI, "5e21", "5000E"),
        (dq(1, 24), DecimalSI, "1e24", "1000000E"),
        (dq(1234567, 6), DecimalSI, "1234567M", ""),
        (dq(1234567, -3), BinarySI, "1234567m", ""),
        (dq(3, 3), DecimalSI, "3k", ""),
        (dq(1025, 0), BinarySI, "1025", ""),
        (0, DecimalSI, "0", ""),
        (0, BinarySI, "0", ""),
        (dq(1, 9), DecimalExponent, "1e9", ".001e12"),
        (dq(1, -3), DecimalExponent, "1e-3", "0.001e0"),
        (dq(1, -9), DecimalExponent, "1e-9", "1000e-12"),
        (dq(80, -3), DecimalExponent, "80e-3", ""),
        (dq(300, 6), DecimalExponent, "300e6", ""),
        (dq(1, 12), DecimalExponent, "1e12", ""),
        (dq(1, 3), DecimalExponent, "1e3", ""),
        (dq(3, 3), DecimalExponent, "3e3", ""),
        (0, DecimalExponent, "0", "00"),
        (dq(1, -9), DecimalSI, "1n", ""),
        (dq(80, -9), DecimalSI, "80n", ""),
        (dq(1080, -9), DecimalSI, "1080n", ""),
        (dq(108, -8), DecimalSI, "1080n", ""),
        (dq(10800, -10), DecimalSI, "1080n", ""),
        (dq(1, -6), DecimalSI, "1u", ""),
        (dq(80, -6), DecimalSI, "80u", ""),
        (dq(1080, -6), DecimalSI, "1080u", ""),
    ];
    for &(nanos, format, expect, alternate) in table {
        let value = Quantity::from_nanos(nanos, format);
        assert_eq!(value.to_string(), expect, "{nanos}n {format}");
        assert_eq!(canon(expect), expect, "reparse {expect}");
        if !alternate.is_empty() {
            assert_eq!(canon(alternate), expect, "alternate {alternate}");
        }
        if nanos != 0 {
            let mut negated = value.clone();
            negated.neg();
            assert_eq!(negated.to_string(), format!("-{expect}"));
        }
    }
}

/// Upstream TestQuantityParseEmit plus the examples this crate's users rely on.
#[test]
fn parse_then_print() {
    let table = [
        ("1Ki", "1Ki"),
        ("1Mi", "1Mi"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1000M", "1G"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
        ("100m", "100m"),
        ("0.5", "500m"),
        ("2", "2"),
        ("8Gi", "8Gi"),
        ("1G", "1G"),
        ("1e3", "1e3"),
        ("1.5Gi", "1536Mi"),
        // Not a whole number of Ki: BinarySI with no suffix (upstream CanonicalizeBytes),
        // which then reads back as DecimalSI (found by the quantity fuzz target).
        ("62.5Ki", "64000"),
        ("64000", "64k"),
        ("0", "0"),
        ("1.1", "1100m"),
        ("-5", "-5"),
        ("0.0001", "100u"),
        ("0.5Ki", "512"),
        ("1.5Ki", "1536"),
        ("1Ei", "1Ei"),
        ("8Ei", "9223372036854775807"),
        ("100.035Ki", "102435840m"),
        ("1.1Ki", "1126400m"),
        ("1e0", "1"),
        ("1e-999999999", "1e-9"),
        ("0e999999999", "0"),
        ("-0", "0"),
        ("-0.0Ki", "0"),
        (".", "0"),
        ("-.", "0"),
        (".5", "500m"),
        ("5.", "5"),
        ("1000m", "1"),
        ("1500m", "1500m"),
        ("2000m", "2"),
        ("12E", "12E"),
        ("1000E", "1e21"),
        ("0.1n", "1n"),
        ("128974848", "128974848"),
        ("129e6", "129e6"),
        ("129M", "129M"),
        ("123Mi", "123Mi"),
    ];
    for (input, expect) in table {
        assert_eq!(canon(input), expect, "{input}");
        if expect != "0" && !input.starts_with('-') {
            assert_eq!(
                canon(&format!("-{input}")),
                format!("-{expect}"),
                "-{input}"
            );
        }
    }
}

#[test]
fn value_and_milli_value_round_away_from_zero() {
    let table: &[(&str, i64, i64)] = &[
        ("0", 0, 0),
        ("100m", 1, 100),
        ("1", 1, 1000),
        ("1.5", 2, 1500),
        ("-1.5", -2, -1500),
        ("-100m", -1, -100),
        ("0.0001", 1, 1),
        ("-0.0001", -1, -1),
        ("1n", 1, 1),
        ("1u", 1, 1),
        ("2000m", 2, 2000),
        ("1Ki", 1024, 1024 * 1000),
        ("8Gi", 8 << 30, (8 << 30) * 1000),
        ("1Ei", 1 << 60, i64::MAX),
        ("9Ei", i64::MAX, i64::MAX),
        ("12E", i64::MAX, i64::MAX),
        ("-12E", i64::MIN, i64::MIN),
        ("1E", 1_000_000_000_000_000_000, i64::MAX),
        ("9223372036854775807", i64::MAX, i64::MAX),
        ("9223372036854775806.5", i64::MAX, i64::MAX),
        ("9223372036854775807m", 9223372036854776, i64::MAX),
    ];
    for &(input, value, milli) in table {
        let got = q(input);
        assert_eq!(got.value(), value, "value {input}");
        assert_eq!(got.milli_value(), milli, "milli {input}");
    }
}

/// Upstream TestMilliNewSet / TestNewSet / TestNewScaledSet.
#[test]
fn constructors() {
    let milli: &[(i64, Format, &str)] = &[
        (1, DecimalSI, "1m"),
        (1000, DecimalSI, "1"),
        (1234000, DecimalSI, "1234"),
        (1024, BinarySI, "1024m"),
        (1000000, DecimalExponent, "1e3"),
        (1024 * 1024, BinarySI, "1048576m"),
    ];
    for &(value, format, expect) in milli {
        let got = Quantity::from_milli(value, format);
        assert_eq!(got.to_string(), expect);
        assert_eq!(got.format(), format);
        assert_eq!(q(expect).milli_value(), value);
    }
    let whole: &[(i64, Format, &str)] = &[
        (1, DecimalSI, "1"),
        (1000, DecimalSI, "1k"),
        (1234000, DecimalSI, "1234k"),
        (1024, BinarySI, "1Ki"),
        (1000000, DecimalExponent, "1e6"),
        (1024 * 1024, BinarySI, "1Mi"),
        (8 * 1024 * 1024 * 1024, BinarySI, "8Gi"),
        (i64::MAX, BinarySI, "9223372036854775807"),
    ];
    for &(value, format, expect) in whole {
        let got = Quantity::from_value(value, format);
        assert_eq!(got.to_string(), expect);
        assert_eq!(q(expect).value(), value);
    }
    // -2^63 prints as -8Ei; parsing "-8Ei" caps the magnitude at 2^63-1, as upstream.
    assert_eq!(Quantity::from_value(i64::MIN, BinarySI).to_string(), "-8Ei");
    assert_eq!(q("-8Ei").value(), -i64::MAX);
    let scaled: &[(i128, &str)] = &[
        (1, "1n"),
        (1000, "1u"),
        (1_000_000, "1m"),
        (1_000_000_000, "1"),
        (0, "0"),
    ];
    for &(nanos, expect) in scaled {
        assert_eq!(Quantity::from_nanos(nanos, DecimalSI).to_string(), expect);
    }
    assert_eq!(Quantity::zero().to_string(), "0");
    assert_eq!(Quantity::zero().format(), DecimalSI);
    assert_eq!(Quantity::default(), Quantity::zero());
    assert!(Quantity::zero().is_zero());
    assert!(!Quantity::zero().is_negative());
    assert!(q("-1m").is_negative());
    assert!(!q("1m").is_zero());
    assert_eq!(
        Quantity::from_nanos(i128::MIN, DecimalSI).nano_value(),
        -i128::MAX
    );
}

/// Upstream TestQuantityCmp plus value equality across formats.
#[test]
fn ordering_and_equality_are_by_value() {
    let table = [
        ("0", "0", Ordering::Equal),
        ("100m", "50m", Ordering::Greater),
        ("50m", "100m", Ordering::Less),
        ("10000T", "100Gi", Ordering::Greater),
        ("1", "1000m", Ordering::Equal),
        ("1Gi", "1G", Ordering::Greater),
        ("1Ki", "1024", Ordering::Equal),
        ("1e3", "1k", Ordering::Equal),
        ("-1", "1m", Ordering::Less),
        ("0.5", "500m", Ordering::Equal),
    ];
    for (a, b, expect) in table {
        assert_eq!(q(a).cmp(&q(b)), expect, "{a} vs {b}");
        assert_eq!(q(b).cmp(&q(a)), expect.reverse(), "{b} vs {a}");
        assert_eq!(q(a) == q(b), expect == Ordering::Equal, "{a} == {b}");
    }
    assert!(q("1Gi") > q("1G"));
    let set: HashSet<Quantity> = ["1", "1000m", "1e0", "0.001k", "2"]
        .into_iter()
        .map(q)
        .collect();
    assert_eq!(set.len(), 2);
    let mut sorted: Vec<Quantity> = ["1Gi", "500m", "-1", "1G", "0"]
        .into_iter()
        .map(q)
        .collect();
    sorted.sort();
    let printed: Vec<String> = sorted.iter().map(ToString::to_string).collect();
    assert_eq!(printed, ["-1", "0", "500m", "1G", "1Gi"]);
}

/// Upstream TestAdd / TestSub / TestQuantity{Add,Sub}ZeroPreservesSuffix.
#[test]
fn add_and_sub() {
    let d = |v: i64, f: Format| Quantity::from_value(v, f);
    let add_table = [
        (d(10, DecimalSI), d(10, DecimalSI), 20, DecimalSI),
        (d(10, DecimalSI), d(1, BinarySI), 11, DecimalSI),
        (d(10, BinarySI), d(1, DecimalSI), 11, BinarySI),
        (d(0, DecimalSI), d(50, DecimalSI), 50, DecimalSI),
        (d(50, DecimalSI), d(0, DecimalSI), 50, DecimalSI),
        (d(0, DecimalSI), d(0, DecimalSI), 0, DecimalSI),
    ];
    for (mut a, b, expect, format) in add_table {
        a.add(&b);
        assert_eq!(a.value(), expect);
        assert_eq!(a.format(), format);
    }
    let sub_table = [
        (d(10, DecimalSI), d(10, DecimalSI), 0, DecimalSI),
        (d(10, DecimalSI), d(1, BinarySI), 9, DecimalSI),
        (d(10, BinarySI), d(1, DecimalSI), 9, BinarySI),
        (d(0, DecimalSI), d(50, DecimalSI), -50, DecimalSI),
        (d(50, DecimalSI), d(0, DecimalSI), 50, DecimalSI),
        (d(0, DecimalSI), d(0, DecimalSI), 0, DecimalSI),
    ];
    for (mut a, b, expect, format) in sub_table {
        a.sub(&b);
        assert_eq!(a.value(), expect);
        assert_eq!(a.format(), format);
    }
    for value in ["100m", "1Gi"] {
        let mut v1 = q(value);
        v1.add(&Quantity::zero());
        assert_eq!(v1.to_string(), value);
        let mut v2 = Quantity::zero();
        v2.add(&q(value));
        assert_eq!(v2.to_string(), value);
        let mut v3 = q(value);
        v3.sub(&Quantity::zero());
        assert_eq!(v3.to_string(), value);
        let mut v4 = Quantity::zero();
        v4.sub(&q(value));
        assert_eq!(v4.to_string(), format!("-{value}"));
    }
    // Mixed units keep the receiver's format.
    let mut mem = q("1Gi");
    mem.add(&q("512Mi"));
    assert_eq!(mem.to_string(), "1536Mi");
    mem.sub(&q("1G"));
    assert_eq!(mem.to_string(), "610612736");
    let mut cpu = q("1");
    cpu += &q("250m");
    assert_eq!(cpu.to_string(), "1250m");
    cpu -= &q("2");
    assert_eq!(cpu.to_string(), "-750m");
    assert_eq!(cpu.milli_value(), -750);
    // 8Ei (2^63) is reachable by adding and prints exactly.
    let mut big = q("4Ei");
    big.add(&q("4Ei"));
    assert_eq!(big.to_string(), "8Ei");
    assert_eq!(big.value(), i64::MAX);
    // Beyond Ei the suffix stays Ei.
    let mut huge = Quantity::from_nanos(dq(1 << 69, 0), BinarySI);
    huge.add(&huge.clone());
    assert_eq!(huge.to_string(), "1024Ei");
    // Saturation instead of overflow.
    let mut top = Quantity::from_nanos(i128::MAX, DecimalSI);
    top.add(&q("1"));
    assert_eq!(top.nano_value(), i128::MAX);
    let mut bottom = Quantity::from_nanos(-i128::MAX, DecimalSI);
    bottom.sub(&q("1"));
    assert_eq!(bottom.nano_value(), -i128::MAX);
    bottom.neg();
    assert_eq!(bottom.nano_value(), i128::MAX);
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Resources {
    cpu: Quantity,
    memory: Quantity,
    #[serde(rename = "nvidia.com/gpu")]
    gpu: Quantity,
}

#[test]
fn serde_yaml_int_float_and_string() {
    let parsed: Resources =
        serde_yaml::from_str("cpu: 0.5\nmemory: 1024Mi\nnvidia.com/gpu: 1\n").unwrap();
    assert_eq!(parsed.cpu.milli_value(), 500);
    assert_eq!(parsed.cpu.to_string(), "500m");
    assert_eq!(parsed.memory.to_string(), "1Gi");
    assert_eq!(parsed.memory.format(), BinarySI);
    assert_eq!(parsed.gpu.value(), 1);
    assert_eq!(parsed.gpu.format(), DecimalSI);

    let yaml = serde_yaml::to_string(&parsed).unwrap();
    assert!(yaml.contains("cpu: 500m"), "{yaml}");
    assert!(yaml.contains("memory: 1Gi"), "{yaml}");
    let again: Resources = serde_yaml::from_str(&yaml).unwrap();
    assert_eq!(again.cpu, parsed.cpu);
    assert_eq!(again.memory, parsed.memory);
    assert_eq!(again.gpu, parsed.gpu);
    assert_eq!(again.gpu.to_string(), "1");

    let table: &[(&str, &str)] = &[
        ("2", "2"),
        ("-3", "-3"),
        ("0.1", "100m"),
        ("1.5", "1500m"),
        ("\"250m\"", "250m"),
        ("'1.5Gi'", "1536Mi"),
        ("128Mi", "128Mi"),
        ("100m", "100m"),
        ("18446744073709551615", "18446744073709551615"),
        ("0", "0"),
        ("\" 1 \"", "1"),
    ];
    for &(yaml, expect) in table {
        let got: Quantity = serde_yaml::from_str(yaml).unwrap_or_else(|e| panic!("{yaml}: {e}"));
        assert_eq!(got.to_string(), expect, "{yaml}");
    }

    let err = serde_yaml::from_str::<Resources>("cpu: 1.5.5\nmemory: 1Gi\nnvidia.com/gpu: 1\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid quantity \"1.5.5\""), "{err}");
    let err = serde_yaml::from_str::<Quantity>("1Gb")
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid quantity \"1Gb\""), "{err}");
    assert!(serde_yaml::from_str::<Quantity>("true").is_err());
    assert!(serde_yaml::from_str::<Quantity>("[1]").is_err());
    assert!(serde_yaml::from_str::<Quantity>(".nan").is_err());
}

/// Upstream TestJSONWhitespace plus null handling.
#[test]
fn serde_json_round_trip() {
    let table = [
        (r#"" 1""#, "1"),
        (r#""1 ""#, "1"),
        ("1", "1"),
        (" 1", "1"),
        ("1 ", "1"),
        ("10", "10"),
        ("-1", "-1"),
        (" -1", "-1"),
        ("0.25", "250m"),
        (r#""1Ki""#, "1Ki"),
        ("null", "0"),
    ];
    for (json, expect) in table {
        let got: Quantity = serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"));
        assert_eq!(got.to_string(), expect, "{json}");
    }
    assert_eq!(serde_json::to_string(&q("0.5")).unwrap(), r#""500m""#);
    assert_eq!(serde_json::to_string(&q("1024Mi")).unwrap(), r#""1Gi""#);
    let optional: Option<Quantity> = serde_json::from_str(r#""2Gi""#).unwrap();
    assert_eq!(optional.map(|v| v.value()), Some(2 << 30));
    let err = serde_json::from_str::<Quantity>(r#""abc""#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid quantity \"abc\""), "{err}");
}

#[test]
fn pathological_inputs_do_not_panic() {
    let long_ones = "1".repeat(100_000);
    let long_fraction = format!("0.{}1", "0".repeat(100_000));
    let long_zeros = format!("{}1", "0".repeat(100_000));
    let long_binary = format!("{}Ei", "9".repeat(10_000));
    let long_binary_fraction = format!("0.{}1Ki", "0".repeat(10_000));
    let long_exact = format!("{}.{}", "1".repeat(20), "5".repeat(10_000));
    let cases: Vec<(&str, Option<&str>)> = vec![
        ("", None),
        ("+", None),
        ("-", None),
        (".", Some("0")),
        ("1.", Some("1")),
        (".5", Some("500m")),
        ("5.", Some("5")),
        ("1Ei", Some("1Ei")),
        ("1e999999999", None),
        ("1e-9223372036854775808", Some("1e-9")),
        ("1e9223372036854775807", None),
        ("0e9223372036854775807", Some("0")),
        ("1e9223372036854775808", None),
        (&long_ones, None),
        (&long_fraction, Some("1n")),
        (&long_zeros, Some("1")),
        (&long_binary, Some("9223372036854775807")),
        (&long_binary_fraction, Some("1n")),
        (&long_exact, Some("11111111111111111111555555556n")),
        (
            "170141183460469231731687303715884105727n",
            Some("170141183460469231731687303715884105727n"),
        ),
        ("170141183460469231731687303715884105728n", None),
        (
            "-170141183460469231731687303715884105727n",
            Some("-170141183460469231731687303715884105727n"),
        ),
    ];
    for (input, expect) in cases {
        let got = Quantity::parse(input).ok().map(|v| v.to_string());
        assert_eq!(got.as_deref(), expect, "{}", &input[..input.len().min(40)]);
    }
}

/// Deterministic fuzzing: every accepted string prints a canonical form that parses back to
/// the same value and prints identically.
#[test]
fn fuzz_round_trip() {
    const ALPHABET: &[u8] = b"0123456789012345678900000.+-eEinumkKMGTP .";
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut accepted = 0;
    for _ in 0..50_000 {
        let len = (next() % 14) as usize;
        let s: String = (0..len)
            .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize] as char)
            .collect();
        let Ok(parsed) = Quantity::parse(&s) else {
            continue;
        };
        accepted += 1;
        let printed = parsed.to_string();
        let reparsed = Quantity::parse(&printed)
            .unwrap_or_else(|e| panic!("{s:?} printed {printed:?} which fails: {e}"));
        assert_eq!(reparsed, parsed, "{s:?} -> {printed:?}");
        assert_eq!(reparsed.to_string(), printed, "{s:?} -> {printed:?}");
        let _ = (parsed.value(), parsed.milli_value());
    }
    assert!(accepted > 1_000, "only {accepted} inputs parsed");
}
