//! TEMPORARY STUB (being replaced by the full implementation).
#![allow(missing_docs, dead_code)]
use serde::{Deserialize, Serialize};
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format { DecimalExponent, BinarySI, DecimalSI }
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Quantity { milli: i128 }
#[derive(Debug, thiserror::Error)]
#[error("invalid quantity {0:?}")]
pub struct QuantityError(String);
impl Quantity {
    pub fn parse(s: &str) -> Result<Quantity, QuantityError> { s.parse::<f64>().map(|v| Quantity{milli:(v*1000.0) as i128}).map_err(|_| QuantityError(s.into())) }
    pub fn milli_value(&self) -> i64 { self.milli as i64 }
    pub fn value(&self) -> i64 { ((self.milli + 999) / 1000) as i64 }
    pub fn from_milli(m: i64, _f: Format) -> Quantity { Quantity{milli: m as i128} }
    pub fn from_value(v: i64, _f: Format) -> Quantity { Quantity{milli: v as i128 * 1000} }
    pub fn is_zero(&self) -> bool { self.milli == 0 }
    pub fn is_negative(&self) -> bool { self.milli < 0 }
}
impl std::fmt::Display for Quantity { fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { write!(f, "{}m", self.milli) } }
impl Serialize for Quantity { fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> { s.collect_str(self) } }
impl<'de> Deserialize<'de> for Quantity { fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> { let s = String::deserialize(d)?; Quantity::parse(&s).map_err(serde::de::Error::custom) } }
