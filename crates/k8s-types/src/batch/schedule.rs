//! A CronJob's schedule as upstream reads it: `cron.ParseStandard` of `github.com/robfig/cron/v3`
//! (five fields: minute, hour, day of month, month, day of week; the descriptors `@yearly`,
//! `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly` and `@every <duration>`;
//! a `TZ=` / `CRON_TZ=` prefix), in the time zone of `spec.timeZone` (Go's `time.LoadLocation`).
//!
//! The grammar, the bounds and the error messages are robfig's (`parser.go` `getRange`,
//! `mustParseInt`, `normalizeFields`, `parseDescriptor`), checked here field by field; the
//! calendar walk (months, leap years, time zones and their daylight-saving changes) is done by
//! the `croner` crate, given each field as robfig's parse left it: `*` where robfig keeps its
//! "star bit" (a `*` or `?` with step 1), otherwise the explicit list of values. So the day
//! rule is robfig's: when both day-of-month and day-of-week are restricted a day matching
//! either runs; otherwise both must match. Time zones come from `chrono-tz` (the IANA database).

use std::str::FromStr;

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;

/// A parsed schedule: the instants it fires at, in whole seconds since the Unix epoch.
#[derive(Clone, Debug)]
pub enum Schedule {
    /// Five cron fields, read in a time zone.
    Cron {
        /// The fields in croner's syntax (see the module docs).
        cron: Box<croner::Cron>,
        /// The zone the fields are read in.
        zone: Tz,
    },
    /// `@every <duration>` (robfig `ConstantDelaySchedule`): every `delay` seconds after the
    /// time it is asked about (at least 1 s, whole seconds).
    Every {
        /// Seconds between runs.
        delay: i64,
    },
}

/// Upstream's `time.LoadLocation` for `spec.timeZone`: `None`, `""` and `"UTC"` are UTC; any
/// other name must be in the IANA database (`unknown time zone X` otherwise). `"Local"` is the
/// machine's zone in Go; the virtual cluster's machine runs on UTC, so it is UTC here too
/// (validation rejects it for CronJobs anyway).
pub fn load_location(name: Option<&str>) -> Result<Tz, String> {
    match name {
        None | Some("") | Some("UTC") | Some("Local") => Ok(Tz::UTC),
        Some(n) => Tz::from_str(n).map_err(|_| format!("unknown time zone {n}")),
    }
}

impl Schedule {
    /// Upstream `cron.ParseStandard(formatSchedule(cj))`: `schedule` read in `time_zone` (a
    /// `TZ=` / `CRON_TZ=` prefix of the schedule wins, as robfig's parser does). The error is
    /// robfig's message.
    pub fn parse(schedule: &str, time_zone: Option<&str>) -> Result<Schedule, String> {
        if schedule.is_empty() {
            return Err("empty spec string".into());
        }
        let mut spec = schedule.trim();
        let mut zone = load_location(time_zone)?;
        if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
            let eq = spec.find('=').unwrap_or(0);
            let end = spec.find(' ').unwrap_or(spec.len());
            let name = &spec[eq + 1..end];
            zone = Tz::from_str(name)
                .map_err(|_| format!("provided bad location {name}: unknown time zone {name}"))?;
            spec = spec[end..].trim();
        }
        if spec.starts_with('@') {
            return parse_descriptor(spec, zone);
        }
        let fields: Vec<&str> = spec.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(format!(
                "expected exactly 5 fields, found {}: [{}]",
                fields.len(),
                fields.join(" ")
            ));
        }
        let mut parts = Vec::with_capacity(5);
        for (field, bounds) in fields.iter().zip(FIELD_BOUNDS.iter()) {
            parts.push(get_field(field, bounds)?.croner_field(bounds));
        }
        let pattern = parts.join(" ");
        let cron = croner::parser::CronParser::new()
            .parse(&pattern)
            .map_err(|e| format!("{e}"))?;
        Ok(Schedule::Cron {
            cron: Box::new(cron),
            zone,
        })
    }

    /// robfig's `Schedule.Next(t)`: the first activation strictly after `after` (seconds since
    /// the epoch), or `None` when there is none within five years (robfig gives the zero time).
    pub fn next(&self, after: i64) -> Option<i64> {
        match self {
            Schedule::Every { delay } => after.checked_add(*delay),
            Schedule::Cron { cron, zone } => {
                let t: DateTime<Tz> = Utc.timestamp_opt(after, 0).single()?.with_timezone(zone);
                let next = cron.find_next_occurrence(&t, false).ok()?.timestamp();
                // robfig gives up after five years of searching.
                (next - after <= 5 * 366 * 86_400).then_some(next)
            }
        }
    }
}

/// Go's `t.In(zone).Format(time.RFC3339)` for `t` seconds after the epoch, e.g.
/// `1970-01-01T09:01:00+09:00`, or `...Z` where the zone's offset is 0 (upstream's
/// `batch.kubernetes.io/cronjob-scheduled-timestamp` annotation).
pub fn format_rfc3339_in(t: i64, zone: &Tz) -> String {
    match Utc.timestamp_opt(t, 0).single() {
        Some(utc) => utc
            .with_timezone(zone)
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        None => String::new(),
    }
}

/// Go's `t.UTC().Format(time.RFC1123Z)`, e.g. `Thu, 01 Jan 1970 00:01:00 +0000` (the CronJob
/// controller's `MissSchedule` message).
pub fn format_rfc1123z_utc(t: i64) -> String {
    Utc.timestamp_opt(t, 0)
        .single()
        .map(|d| d.format("%a, %d %b %Y %H:%M:%S %z").to_string())
        .unwrap_or_default()
}

/// robfig's `bounds`: the range of a field and its names.
struct Bounds {
    min: u32,
    max: u32,
    names: &'static [&'static str],
}

const MONTHS: &[&str] = &[
    "", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DOWS: &[&str] = &["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/// Minute, hour, day of month, month, day of week (robfig `minutes`, `hours`, `dom`, `months`,
/// `dow`: the day of week is 0-6, so 7 is out of range upstream).
const FIELD_BOUNDS: [Bounds; 5] = [
    Bounds {
        min: 0,
        max: 59,
        names: &[],
    },
    Bounds {
        min: 0,
        max: 23,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 31,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 12,
        names: MONTHS,
    },
    Bounds {
        min: 0,
        max: 6,
        names: DOWS,
    },
];

/// The values a field allows, and robfig's star bit.
struct FieldBits {
    values: u64,
    star: bool,
}

impl FieldBits {
    /// The field in croner's syntax: `*` with the star bit, else the values listed.
    fn croner_field(&self, b: &Bounds) -> String {
        if self.star {
            return "*".into();
        }
        (b.min..=b.max)
            .filter(|v| self.values & (1 << v) != 0)
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// robfig `getField`: the union of the comma-separated ranges.
fn get_field(field: &str, b: &Bounds) -> Result<FieldBits, String> {
    let mut bits = FieldBits {
        values: 0,
        star: false,
    };
    for expr in field.split(',') {
        let (values, star) = get_range(expr, b)?;
        bits.values |= values;
        bits.star |= star;
    }
    Ok(bits)
}

/// robfig `getRange`: `*`, `?`, `N`, `N-M`, each optionally `/step` (`N/step` is `N-max/step`).
fn get_range(expr: &str, b: &Bounds) -> Result<(u64, bool), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_and_high.len() == 1;
    let (start, mut end, mut star) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (b.min, b.max, true)
    } else {
        let start = parse_int_or_name(low_and_high[0], b.names)?;
        let end = match low_and_high.len() {
            1 => start,
            2 => parse_int_or_name(low_and_high[1], b.names)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
        (start, end, false)
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = must_parse_int(range_and_step[1])?;
            if single {
                end = b.max;
            }
            if step > 1 {
                star = false;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < b.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            b.min
        ));
    }
    if end > b.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            b.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    let mut values = 0u64;
    let mut v = start;
    while v <= end {
        values |= 1 << v;
        v += step;
    }
    Ok((values, star))
}

/// robfig `parseIntOrName`: a name (case-insensitive) or a number.
fn parse_int_or_name(expr: &str, names: &[&str]) -> Result<u32, String> {
    let lower = expr.to_ascii_lowercase();
    if let Some(i) = names.iter().position(|n| !n.is_empty() && *n == lower) {
        return Ok(i as u32);
    }
    must_parse_int(expr)
}

/// robfig `mustParseInt` (Go `strconv.Atoi` messages).
fn must_parse_int(expr: &str) -> Result<u32, String> {
    let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing \"{expr}\": invalid syntax"
        ));
    }
    let n: i64 = expr.parse().map_err(|_| {
        format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing \"{expr}\": value out of range"
        )
    })?;
    if n < 0 {
        return Err(format!("negative number ({n}) not allowed: {expr}"));
    }
    // Values past 63 cannot be in range of any field; keep them out of range.
    Ok(u32::try_from(n.min(1 << 20)).unwrap_or(u32::MAX))
}

/// robfig `parseDescriptor`.
fn parse_descriptor(spec: &str, zone: Tz) -> Result<Schedule, String> {
    let fields = match spec {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        _ => {
            if let Some(d) = spec.strip_prefix("@every ") {
                let nanos = parse_go_duration(d)
                    .map_err(|e| format!("failed to parse duration {spec}: {e}"))?;
                // robfig `Every`: at least one second, truncated to whole seconds.
                let delay = (nanos / 1_000_000_000).max(1);
                return Ok(Schedule::Every { delay });
            }
            return Err(format!("unrecognized descriptor: {spec}"));
        }
    };
    let cron = croner::parser::CronParser::new()
        .parse(fields)
        .map_err(|e| format!("{e}"))?;
    Ok(Schedule::Cron {
        cron: Box::new(cron),
        zone,
    })
}

/// Go's `time.ParseDuration`, in nanoseconds: a sequence of decimal numbers with units (`ns`,
/// `us`, `µs`, `ms`, `s`, `m`, `h`), e.g. `1h30m`, `1.5h`, `90s`; a leading sign.
pub fn parse_go_duration(s: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration \"{s}\"");
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_len = rest
            .bytes()
            .take_while(|c| c.is_ascii_digit() || *c == b'.')
            .count();
        let num = &rest[..num_len];
        if num.is_empty() || num == "." {
            return Err(invalid());
        }
        let value: f64 = num.parse().map_err(|_| invalid())?;
        rest = &rest[num_len..];
        let unit_len = rest
            .char_indices()
            .find(|(_, c)| c.is_ascii_digit() || *c == '.')
            .map_or(rest.len(), |(i, _)| i);
        let unit = &rest[..unit_len];
        let scale: f64 = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "" => return Err(format!("time: missing unit in duration \"{s}\"")),
            _ => return Err(format!("time: unknown unit \"{unit}\" in duration \"{s}\"")),
        };
        total += value * scale;
        rest = &rest[unit_len..];
    }
    if total > i64::MAX as f64 {
        return Err(invalid());
    }
    let n = total as i64;
    Ok(if neg { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next_n(s: &str, tz: Option<&str>, from: i64, n: usize) -> Vec<i64> {
        let sched = Schedule::parse(s, tz).expect("parses");
        let mut out = Vec::new();
        let mut t = from;
        for _ in 0..n {
            t = sched.next(t).expect("next");
            out.push(t);
        }
        out
    }

    #[test]
    fn five_fields_from_the_epoch() {
        // Every minute from the epoch: 60, 120, 180.
        assert_eq!(next_n("*/1 * * * *", None, 0, 3), vec![60, 120, 180]);
        // robfig's Next is strictly after: from 60 the next is 120.
        assert_eq!(next_n("* * * * *", None, 60, 1), vec![120]);
        // Minutes 5 and 35: 300, 2100, 3900.
        assert_eq!(next_n("5,35 * * * *", None, 0, 3), vec![300, 2100, 3900]);
        // `N/step` is `N-max/step`: 50/5 is minutes 50 and 55.
        assert_eq!(next_n("50/5 * * * *", None, 0, 3), vec![3000, 3300, 6600]);
        // Descriptors: @hourly is `0 * * * *`, @daily and @midnight `0 0 * * *`.
        assert_eq!(next_n("@hourly", None, 0, 2), vec![3600, 7200]);
        assert_eq!(next_n("@midnight", None, 0, 1), vec![86_400]);
        // 1970-01-01 was a Thursday: @weekly (Sunday 00:00) is 1970-01-04.
        assert_eq!(next_n("@weekly", None, 0, 1), vec![3 * 86_400]);
        // @every 90s counts from the time asked about.
        assert_eq!(next_n("@every 1m30s", None, 7, 2), vec![97, 187]);
    }

    #[test]
    fn day_of_month_or_day_of_week() {
        // Both restricted: the 10th of the month OR a Monday. January 1970: Mon 5th, Sat 10th.
        let days: Vec<i64> = next_n("0 0 10 * 1", None, 0, 3)
            .into_iter()
            .map(|t| t / 86_400 + 1)
            .collect();
        assert_eq!(days, vec![5, 10, 12]);
        // Day of month `*`: only Mondays (robfig's star bit).
        let days: Vec<i64> = next_n("0 0 * * MON", None, 0, 2)
            .into_iter()
            .map(|t| t / 86_400 + 1)
            .collect();
        assert_eq!(days, vec![5, 12]);
        // `*/2` clears the star bit: odd days OR Mondays (1st excluded: from 0 strictly after).
        let days: Vec<i64> = next_n("0 0 */2 * 1", None, 0, 4)
            .into_iter()
            .map(|t| t / 86_400 + 1)
            .collect();
        assert_eq!(days, vec![3, 5, 7, 9]);
    }

    #[test]
    fn time_zone() {
        // 09:00 in Asia/Tokyo (UTC+9) is 00:00 UTC: from the epoch, the next is 1970-01-02 00:00Z.
        assert_eq!(next_n("0 9 * * *", Some("Asia/Tokyo"), 0, 1), vec![86_400]);
        // The TZ= prefix is read as robfig does.
        assert_eq!(next_n("TZ=Asia/Tokyo 0 9 * * *", None, 0, 1), vec![86_400]);
        assert_eq!(
            load_location(Some("Mars/Olympus")).unwrap_err(),
            "unknown time zone Mars/Olympus"
        );
    }

    #[test]
    fn rfc3339_in_zone() {
        assert_eq!(format_rfc3339_in(60, &Tz::UTC), "1970-01-01T00:01:00Z");
        let tokyo = load_location(Some("Asia/Tokyo")).expect("zone");
        assert_eq!(format_rfc3339_in(60, &tokyo), "1970-01-01T09:01:00+09:00");
        assert_eq!(format_rfc1123z_utc(60), "Thu, 01 Jan 1970 00:01:00 +0000");
    }

    #[test]
    fn robfig_errors() {
        let err = |s: &str| Schedule::parse(s, None).unwrap_err();
        assert_eq!(err(""), "empty spec string");
        assert_eq!(
            err("* * * *"),
            "expected exactly 5 fields, found 4: [* * * *]"
        );
        assert_eq!(
            err("60 * * * *"),
            "end of range (60) above maximum (59): 60"
        );
        assert_eq!(err("* * * * 7"), "end of range (7) above maximum (6): 7");
        assert_eq!(
            err("* * 0 * *"),
            "beginning of range (0) below minimum (1): 0"
        );
        assert_eq!(
            err("5-1 * * * *"),
            "beginning of range (5) beyond end of range (1): 5-1"
        );
        assert_eq!(
            err("*/0 * * * *"),
            "step of range should be a positive number: */0"
        );
        assert_eq!(err("1-2-3 * * * *"), "too many hyphens: 1-2-3");
        assert_eq!(
            err("L * * * *"),
            "failed to parse int from L: strconv.Atoi: parsing \"L\": invalid syntax"
        );
        assert_eq!(err("@fortnightly"), "unrecognized descriptor: @fortnightly");
        assert_eq!(
            err("@every 5"),
            "failed to parse duration @every 5: time: missing unit in duration \"5\""
        );
        // Names are robfig's: months and days, case-insensitive.
        assert!(Schedule::parse("0 0 * JAN-mar sun", None).is_ok());
    }
}
