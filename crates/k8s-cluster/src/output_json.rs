//! `--output json` written straight from the typed objects, keys sorted.
//!
//! `kubectl get -o json` prints every object's keys in sorted order (client-go prints through
//! `encoding/json` of an `unstructured` map, whose keys Go's `encoding/json` sorts:
//! staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/unstructured). Our typed structs declare their
//! fields in the order of upstream's Go types, so printing them in that order would not match;
//! converting each object to a `serde_json::Value` (a `BTreeMap` per object) sorted them, at the
//! cost of a copy of every string and a map node per field.
//!
//! [`SortedPretty`] is a `serde::Serializer` that writes the pretty JSON `serde_json::to_writer_pretty`
//! writes for the object's `serde_json::Value` (two-space indent, `": "`, the same string escapes and
//! number formats, `f32` widened to `f64` as `serde_json::to_value` widens it) directly from the
//! typed value: each struct's or map's fields are written in the order they come into one buffer,
//! and when a field's key is smaller than the one before, the finished fields are moved into key
//! order when the struct ends (a copy of its bytes, no allocation per field). Duplicate keys (a
//! `#[serde(flatten)]` map repeating a field) keep the last value, as the `Value` map's insert does.

use serde::ser::{self, Serialize};
use std::borrow::Cow;

type Error = serde_json::Error;

/// A field written into the buffer: its key, where its separator starts, where its `"key": value`
/// starts.
struct Field {
    key: Cow<'static, str>,
    /// The key's first eight bytes as a big-endian number (zero-padded): ordering by it, then by
    /// the whole key when equal, is the key's byte order, with most comparisons on integers.
    prefix: u64,
    sep: usize,
    body: usize,
}

impl Field {
    fn prefix_of(key: &str) -> u64 {
        let mut word = [0u8; 8];
        let n = key.len().min(8);
        word[..n].copy_from_slice(&key.as_bytes()[..n]);
        u64::from_be_bytes(word)
    }

    /// The keys' order (`str`'s byte order).
    fn cmp_key(&self, other: &Field) -> std::cmp::Ordering {
        self.prefix
            .cmp(&other.prefix)
            .then_with(|| self.key.cmp(&other.key))
    }
}

/// The pretty JSON writer with sorted keys. Write a value with [`SortedPretty::write`], take the
/// bytes from [`SortedPretty::buf`] (and clear it) between values to stream a long list.
#[derive(Default)]
pub(crate) struct SortedPretty {
    /// The bytes written.
    pub(crate) buf: Vec<u8>,
    /// Containers open around the value being written (the indent of its fields is one more).
    depth: usize,
    /// The fields of every open struct or map, innermost last.
    fields: Vec<Field>,
    /// Where the bytes of a struct being reordered are copied.
    scratch: Vec<u8>,
    /// The key order of the struct being reordered (indexes into its fields).
    order: Vec<usize>,
}

impl SortedPretty {
    /// Writes `value` as if it were nested in `depth` containers (its fields are indented by
    /// `depth + 1` levels, its closing brace by `depth`).
    ///
    /// # Errors
    /// The value's own serialization error, or a map key that is not a string, integer or bool.
    pub(crate) fn write<T: Serialize + ?Sized>(
        &mut self,
        value: &T,
        depth: usize,
    ) -> Result<(), Error> {
        self.depth = depth;
        self.fields.clear();
        value.serialize(&mut *self)
    }

    fn indent(&mut self, depth: usize) {
        const SPACES: &[u8; 64] =
            b"                                                                ";
        let mut n = 2 * depth;
        while n > 0 {
            let k = n.min(SPACES.len());
            self.buf.extend_from_slice(&SPACES[..k]);
            n -= k;
        }
    }

    fn string(&mut self, s: &str) {
        // serde_json escapes only `"`, `\` and the control characters below U+0020; a string
        // without any (almost every one) is copied between quotes as it is.
        if !needs_escape(s.as_bytes()) {
            self.buf.reserve(s.len() + 2);
            self.buf.push(b'"');
            self.buf.extend_from_slice(s.as_bytes());
            self.buf.push(b'"');
            return;
        }
        // serde_json's escapes, byte for byte (its compact formatter writes strings as the pretty one does).
        let _ = serde_json::to_writer(&mut self.buf, s);
    }

    /// Opens an object holding one key (an enum variant, as `serde_json::to_value` writes it).
    fn open_variant(&mut self, variant: &str) {
        self.buf.extend_from_slice(b"{\n");
        self.depth += 1;
        self.indent(self.depth);
        self.string(variant);
        self.buf.extend_from_slice(b": ");
    }

    fn close_variant(&mut self) {
        self.depth -= 1;
        self.buf.push(b'\n');
        self.indent(self.depth);
        self.buf.push(b'}');
    }

    fn open_object(&mut self, variant: Option<&'static str>) -> Obj<'_> {
        if let Some(v) = variant {
            self.open_variant(v);
        }
        self.buf.push(b'{');
        self.depth += 1;
        Obj {
            base: self.fields.len(),
            in_order: true,
            variant: variant.is_some(),
            w: self,
        }
    }

    fn open_array(&mut self, variant: Option<&'static str>) -> Arr<'_> {
        if let Some(v) = variant {
            self.open_variant(v);
        }
        self.buf.push(b'[');
        self.depth += 1;
        Arr {
            first: true,
            variant: variant.is_some(),
            w: self,
        }
    }
}

/// Whether serde_json would escape a byte of `s`: `"`, `\\` or a control character below U+0020
/// (it writes every other byte, non-ASCII ones too, as it is). Eight bytes at a time with the
/// bit tricks "has a byte equal to" and "has a byte less than" (exact as a yes/no for every
/// byte value), since every string of the output is checked.
fn needs_escape(s: &[u8]) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(LO) & !x & HI != 0;
    let mut chunks = s.chunks_exact(8);
    for c in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(c);
        let x = u64::from_le_bytes(word);
        let below_space = x.wrapping_sub(LO * 0x20) & !x & HI != 0;
        if below_space
            || has_zero(x ^ (LO * u64::from(b'"')))
            || has_zero(x ^ (LO * u64::from(b'\\')))
        {
            return true;
        }
    }
    chunks
        .remainder()
        .iter()
        .any(|&b| b == b'"' || b == b'\\' || b < 0x20)
}

/// An open JSON object (a struct, a map, a struct variant's body).
pub(crate) struct Obj<'a> {
    w: &'a mut SortedPretty,
    /// Its first field in `w.fields`.
    base: usize,
    /// Whether the keys so far came in strictly increasing order.
    in_order: bool,
    variant: bool,
}

impl Obj<'_> {
    /// Starts a field: the separator, the indent, the key and `": "`.
    fn key(&mut self, key: Cow<'static, str>) {
        let w = &mut *self.w;
        let fields = &w.fields[self.base..];
        let prefix = Field::prefix_of(&key);
        if let Some(last) = fields.last() {
            if prefix < last.prefix || (prefix == last.prefix && *key <= *last.key) {
                self.in_order = false;
            }
        }
        let sep = w.buf.len();
        w.buf
            .extend_from_slice(if fields.is_empty() { b"\n" } else { b",\n" });
        let body = w.buf.len();
        w.indent(w.depth);
        w.string(&key);
        w.buf.extend_from_slice(b": ");
        w.fields.push(Field {
            key,
            prefix,
            sep,
            body,
        });
    }

    fn finish(self) {
        let w = self.w;
        let n = w.fields.len() - self.base;
        if !self.in_order {
            // Key order; equal keys keep their written order, and the last of them wins.
            let SortedPretty {
                buf,
                fields,
                scratch,
                order,
                ..
            } = &mut *w;
            let fields = &fields[self.base..];
            order.clear();
            order.extend(0..fields.len());
            order.sort_by(|a, b| fields[*a].cmp_key(&fields[*b]));
            let start = fields[0].sep;
            scratch.clear();
            scratch.extend_from_slice(&buf[start..]);
            buf.truncate(start);
            let mut written = 0;
            for (pos, &i) in order.iter().enumerate() {
                let superseded = order.get(pos + 1).is_some_and(|&j| {
                    fields[j].prefix == fields[i].prefix && fields[j].key == fields[i].key
                });
                if superseded {
                    continue;
                }
                buf.extend_from_slice(if written == 0 { b"\n" } else { b",\n" });
                let end = fields.get(i + 1).map_or(start + scratch.len(), |f| f.sep);
                buf.extend_from_slice(&scratch[fields[i].body - start..end - start]);
                written += 1;
            }
        }
        w.fields.truncate(self.base);
        w.depth -= 1;
        if n > 0 {
            w.buf.push(b'\n');
            w.indent(w.depth);
        }
        w.buf.push(b'}');
        if self.variant {
            w.close_variant();
        }
    }
}

impl ser::SerializeStruct for Obj<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.key(Cow::Borrowed(key));
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Error> {
        self.finish();
        Ok(())
    }
}

impl ser::SerializeStructVariant for Obj<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }
    fn end(self) -> Result<(), Error> {
        self.finish();
        Ok(())
    }
}

impl ser::SerializeMap for Obj<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        let key = key.serialize(KeySerializer)?;
        self.key(Cow::Owned(key));
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Error> {
        self.finish();
        Ok(())
    }
}

/// An open JSON array (a sequence, tuple, tuple struct, a tuple variant's body).
pub(crate) struct Arr<'a> {
    w: &'a mut SortedPretty,
    first: bool,
    variant: bool,
}

impl Arr<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let w = &mut *self.w;
        w.buf
            .extend_from_slice(if self.first { b"\n" } else { b",\n" });
        self.first = false;
        w.indent(w.depth);
        value.serialize(&mut *self.w)
    }

    fn finish(self) {
        let w = self.w;
        w.depth -= 1;
        if !self.first {
            w.buf.push(b'\n');
            w.indent(w.depth);
        }
        w.buf.push(b']');
        if self.variant {
            w.close_variant();
        }
    }
}

macro_rules! arr_impl {
    ($trait:ident, $method:ident) => {
        impl ser::$trait for Arr<'_> {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.element(value)
            }
            fn end(self) -> Result<(), Error> {
                self.finish();
                Ok(())
            }
        }
    };
}
arr_impl!(SerializeSeq, serialize_element);
arr_impl!(SerializeTuple, serialize_element);
arr_impl!(SerializeTupleStruct, serialize_field);
arr_impl!(SerializeTupleVariant, serialize_field);

impl<'a> ser::Serializer for &'a mut SortedPretty {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Arr<'a>;
    type SerializeTuple = Arr<'a>;
    type SerializeTupleStruct = Arr<'a>;
    type SerializeTupleVariant = Arr<'a>;
    type SerializeMap = Obj<'a>;
    type SerializeStruct = Obj<'a>;
    type SerializeStructVariant = Obj<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.buf
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        serde_json::to_writer(&mut self.buf, &v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        serde_json::to_writer(&mut self.buf, &serde_json::to_value(v)?)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        serde_json::to_writer(&mut self.buf, &v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        serde_json::to_writer(&mut self.buf, &serde_json::to_value(v)?)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        // `serde_json::to_value` keeps an f32 as the f64 it widens to.
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        // A non-finite number is `null` in a `Value`.
        serde_json::to_writer(&mut self.buf, &serde_json::Number::from_f64(v))
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.string(v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.string(v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        // A `Value` holds bytes as an array of numbers.
        let mut arr = self.open_array(None);
        for b in v {
            arr.element(b)?;
        }
        arr.finish();
        Ok(())
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.buf.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.string(variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.open_variant(variant);
        value.serialize(&mut *self)?;
        self.close_variant();
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Arr<'a>, Error> {
        Ok(self.open_array(None))
    }
    fn serialize_tuple(self, _len: usize) -> Result<Arr<'a>, Error> {
        Ok(self.open_array(None))
    }
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Arr<'a>, Error> {
        Ok(self.open_array(None))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Arr<'a>, Error> {
        Ok(self.open_array(Some(variant)))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Obj<'a>, Error> {
        Ok(self.open_object(None))
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Obj<'a>, Error> {
        Ok(self.open_object(None))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Obj<'a>, Error> {
        Ok(self.open_object(Some(variant)))
    }
}

/// A map key as the string a `serde_json::Value` map holds: strings and chars as they are,
/// integers and bools printed; other keys are the error `serde_json::to_value` gives.
struct KeySerializer;

impl ser::Serializer for KeySerializer {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = ser::Impossible<String, Error>;
    type SerializeTuple = ser::Impossible<String, Error>;
    type SerializeTupleStruct = ser::Impossible<String, Error>;
    type SerializeTupleVariant = ser::Impossible<String, Error>;
    type SerializeMap = ser::Impossible<String, Error>;
    type SerializeStruct = ser::Impossible<String, Error>;
    type SerializeStructVariant = ser::Impossible<String, Error>;

    fn serialize_str(self, v: &str) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_char(self, v: char) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_bool(self, v: bool) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i8(self, v: i8) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i16(self, v: i16) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i32(self, v: i32) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i64(self, v: i64) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u8(self, v: u8) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u16(self, v: u16) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u32(self, v: u32) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u64(self, v: u64) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_f32(self, _v: f32) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_f64(self, _v: f64) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_none(self) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_unit(self) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<String, Error> {
        Ok(variant.to_string())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<String, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_error())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_error())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_error())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_error())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_error())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(key_error())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_error())
    }
}

fn key_error() -> Error {
    ser::Error::custom("key must be a string")
}

#[cfg(test)]
mod tests {
    use super::SortedPretty;
    use proptest::prelude::*;
    use serde::Serialize;
    use std::collections::BTreeMap;

    /// What the List printed before: the value's `serde_json::Value` (keys sorted by its
    /// `BTreeMap`), pretty.
    fn through_value<T: Serialize>(v: &T) -> String {
        serde_json::to_string_pretty(&serde_json::to_value(v).expect("value")).expect("json")
    }

    /// The word-at-a-time check agrees with the byte-by-byte rule for every byte value at every
    /// position of a word and of the tail, non-ASCII bytes included.
    #[test]
    fn needs_escape_is_the_byte_rule() {
        let rule = |s: &[u8]| s.iter().any(|&b| b == b'"' || b == b'\\' || b < 0x20);
        for len in 1..=19 {
            for at in 0..len {
                for b in 0..=255u8 {
                    for fill in [b'a', 0x7f, 0x80, 0xff, b' '] {
                        let mut s = vec![fill; len];
                        s[at] = b;
                        assert_eq!(super::needs_escape(&s), rule(&s), "{s:?}");
                    }
                }
            }
        }
        assert!(!super::needs_escape(b""));
        assert!(!super::needs_escape(
            "nvidia.com/gpu \u{e9}\u{1f600} x".as_bytes()
        ));
        assert!(super::needs_escape("0123456789abcdef\n".as_bytes()));
    }

    /// Ordering by the eight-byte prefix, then the whole key, is `str`'s order, for keys that
    /// share prefixes, are prefixes of each other, hold NUL bytes or are not ASCII.
    #[test]
    fn field_order_is_the_key_order() {
        let keys = [
            "",
            "\0",
            "a",
            "a\0",
            "a\0\0",
            "ab",
            "abcdefgh",
            "abcdefgh\0",
            "abcdefghi",
            "abcdefgg",
            "abcdefgi",
            "apiVersion",
            "kind",
            "metadata",
            "spec",
            "status",
            "\u{e9}t\u{e9}",
            "z\u{1f600}",
            "\u{ff}",
            "ABCDEFGHIJ",
            "abcdefghij",
            "b",
        ];
        let field = |k: &'static str| super::Field {
            key: std::borrow::Cow::Borrowed(k),
            prefix: super::Field::prefix_of(k),
            sep: 0,
            body: 0,
        };
        for a in keys {
            for b in keys {
                assert_eq!(field(a).cmp_key(&field(b)), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }

    fn sorted(v: &impl Serialize) -> String {
        let mut w = SortedPretty::default();
        w.write(v, 0).expect("write");
        String::from_utf8(w.buf).expect("utf8")
    }

    /// Bytes, serialized as bytes (not as a sequence).
    #[derive(Debug, Clone)]
    struct Raw(Vec<u8>);

    impl Serialize for Raw {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(&self.0)
        }
    }

    #[derive(Serialize, Debug, Clone)]
    enum Leaf {
        Unit,
        New(u8),
        Tuple(i32, bool),
        Struct { y: String, b: Raw },
    }

    /// Fields declared out of key order (as our types follow upstream's Go field order), an
    /// optional list, an f32, a flattened map whose keys may repeat a field's, integer map keys
    /// (sorted as strings by a `Value` map: "10" before "9").
    #[derive(Serialize, Debug, Clone)]
    #[serde(rename_all = "camelCase")]
    struct Inner {
        zeta: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        items: Vec<Leaf>,
        alpha: f32,
        nums: BTreeMap<i32, bool>,
        #[serde(flatten)]
        rest: BTreeMap<String, i64>,
    }

    #[derive(Serialize, Debug, Clone)]
    struct Outer {
        name: String,
        inner: Vec<Inner>,
        empty: Empty,
        b: Option<Box<Inner>>,
    }

    #[derive(Serialize, Debug, Clone)]
    struct Empty {}

    fn leaf() -> impl Strategy<Value = Leaf> {
        prop_oneof![
            Just(Leaf::Unit),
            any::<u8>().prop_map(Leaf::New),
            (any::<i32>(), any::<bool>()).prop_map(|(a, b)| Leaf::Tuple(a, b)),
            (".{0,6}", prop::collection::vec(any::<u8>(), 0..3))
                .prop_map(|(y, b)| Leaf::Struct { y, b: Raw(b) }),
        ]
    }

    fn inner() -> impl Strategy<Value = Inner> {
        let key = prop::sample::select(vec!["alpha", "zeta", "items", "a", "nums", "m", "z"]);
        (
            prop::option::of(".{0,8}"),
            prop::collection::vec(leaf(), 0..3),
            any::<f32>(),
            prop::collection::btree_map(any::<i32>(), any::<bool>(), 0..4),
            prop::collection::btree_map(key.prop_map(str::to_string), any::<i64>(), 0..4),
        )
            .prop_map(|(zeta, items, alpha, nums, rest)| Inner {
                zeta,
                items,
                alpha,
                nums,
                rest,
            })
    }

    proptest! {
        /// Any value of these types is written byte for byte as through a `serde_json::Value`.
        #[test]
        fn sorted_writer_equals_the_value_path(
            name in ".{0,10}",
            inner in prop::collection::vec(inner(), 0..3),
            b in prop::option::of(inner()),
        ) {
            let v = Outer { name, inner, empty: Empty {}, b: b.map(Box::new) };
            prop_assert_eq!(sorted(&v), through_value(&v));
        }
    }

    /// Strings with and without characters to escape (quote, backslash, control characters,
    /// DEL and non-ASCII, which serde_json leaves as they are) are written as serde_json writes them.
    #[test]
    fn strings_are_escaped_as_serde_json_does() {
        for s in [
            "plain",
            "",
            "a\"b",
            "back\\slash",
            "tab\tnew\nline\r",
            "\u{1}\u{1f} ",
            "del\u{7f}",
            "é😀/</script>",
        ] {
            assert_eq!(
                sorted(&s),
                serde_json::to_string_pretty(s).unwrap(),
                "{s:?}"
            );
        }
    }

    /// Every object of every bundled scenario's manifests (Pods, Deployments, Nodes, Jobs,
    /// custom resources, ...) is written as through its `Value`.
    #[test]
    fn bundled_scenario_objects_equal_the_value_path() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .expect("scenarios")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        let mut objects = 0;
        for f in &files {
            let text = std::fs::read_to_string(f).expect("read");
            let Ok(parsed) = crate::manifest::parse_stream(&f.display().to_string(), &text) else {
                continue;
            };
            for loaded in &parsed.docs {
                if let crate::manifest::Document::Object(o) = &loaded.doc {
                    assert_eq!(sorted(&**o), through_value(&o.to_json()), "{}", f.display());
                    objects += 1;
                }
            }
        }
        assert!(objects > 100, "only {objects} objects");
    }
}
