//! The NumPy `.npy` header, encoded and decoded.
//!
//! A `.npy` file is a short preamble followed by the array's elements, raw.
//! The preamble is the magic string `\x93NUMPY`, two version bytes (major,
//! minor), the length of the header text that follows (a little-endian
//! `u16` in version 1.0, a `u32` in versions 2.0 and 3.0), and the header
//! text itself: a Python dict literal naming the element type (`descr`),
//! whether the elements are stored in Fortran order (`fortran_order`) and
//! the array's `shape`, padded with spaces and ended by a newline so that
//! the data starts at a multiple of 64 bytes. Version 3.0 differs from 2.0
//! only in allowing UTF-8 in the header text.
//!
//! This module turns headers into bytes and back, and does no I/O; the
//! `.npy` file format that reads and writes them, with the array's bytes
//! after them, is `npy/format.rs`.
//! [`encode`] writes byte for byte what `numpy.save` writes for the same
//! array (checked against NumPy 1.24). [`decode`] reads what any NumPy
//! version writes for arrays of the element types of [`ElementType`],
//! parsing the dict with a small parser of its own rather than evaluating
//! it.
//!
//! ```
//! use dist_io::npy::{data_bytes, decode, encode};
//! use dist_io::ElementType;
//! use procgrid::Order;
//!
//! let preamble = encode(ElementType::F64, Order::RowMajor, &[3, 4]);
//! let header = decode(&preamble).unwrap();
//! assert_eq!(header.shape, vec![3, 4]);
//! assert_eq!(header.data_offset, preamble.len());
//! assert_eq!(data_bytes(&header), Some(96));
//! ```

use crate::element::ElementType;
use procgrid::Order;

pub(crate) mod format;

/// The first six bytes of every `.npy` file.
///
/// ```
/// use dist_io::npy::{encode, MAGIC};
/// use dist_io::ElementType;
/// use procgrid::Order;
/// assert!(encode(ElementType::U8, Order::RowMajor, &[5]).starts_with(MAGIC));
/// ```
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// How many bytes always suffice to learn a header's length: the magic
/// string, the version and a length field of the widest kind (a version 1.0
/// file needs only 10). Every valid `.npy` file is longer than this, so a
/// reader may start by reading this many bytes, then as many as
/// [`Problem::NeedBytes`] asks for.
///
/// ```
/// use dist_io::npy::{decode, encode, Problem, PREFIX_BYTES};
/// use dist_io::ElementType;
/// use procgrid::Order;
/// let preamble = encode(ElementType::F32, Order::ColumnMajor, &[2, 3]);
/// assert_eq!(decode(&preamble[..PREFIX_BYTES]), Err(Problem::NeedBytes(preamble.len())));
/// ```
pub const PREFIX_BYTES: usize = 12;

/// Bytes before the length field: the magic string and the two version bytes.
const VERSION_END: usize = 8;

/// The multiple of which NumPy makes the whole preamble, so that the data
/// can be memory-mapped with any alignment an element needs.
const ALIGN: usize = 64;

/// NumPy pads the dict with spaces so that the extent of the axis an append
/// would grow (the first in C order, the last in Fortran order) can be
/// rewritten in place with up to this many digits.
const GROWTH_AXIS_MAX_DIGITS: usize = 21;

/// The keys of a header dict, each present exactly once.
const KEYS: [&str; 3] = ["descr", "fortran_order", "shape"];

/// Shapes with more dimensions than this are described by their dimension
/// count in messages rather than written out.
const SHAPE_SHOWN_DIMS: usize = 8;

/// What a `.npy` header says.
///
/// ```
/// use dist_io::npy::{decode, encode, Header};
/// use dist_io::ElementType;
/// use procgrid::Order;
/// let header = decode(&encode(ElementType::C64, Order::ColumnMajor, &[7])).unwrap();
/// assert_eq!(
///     header,
///     Header {
///         element: ElementType::C64,
///         order: Order::ColumnMajor,
///         shape: vec![7],
///         version: (1, 0),
///         data_offset: 128,
///     }
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The element type (`descr`).
    pub element: ElementType,
    /// The order of the elements in the file: `fortran_order: False` is
    /// [`Order::RowMajor`] (C order, the last index varies fastest),
    /// `fortran_order: True` is [`Order::ColumnMajor`] (the first index
    /// varies fastest).
    pub order: Order,
    /// The array's extents, at least one of them.
    pub shape: Vec<usize>,
    /// The format version, `(major, minor)`: `(1, 0)`, `(2, 0)` or `(3, 0)`.
    pub version: (u8, u8),
    /// The bytes before the data: the whole preamble (magic string,
    /// version, length field and header text).
    pub data_offset: usize,
}

/// Why bytes are not a header we read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// The header is longer than the bytes given: at least this many bytes
    /// are needed in all (counted from the start of the file).
    #[error("the .npy header is incomplete: at least {0} bytes are needed")]
    NeedBytes(usize),
    /// Not a header we read; the text says what was wrong and what was
    /// expected (one sentence, lower case start, no trailing period).
    #[error("{0}")]
    Invalid(String),
}

/// A refusal saying `message`.
fn invalid(message: impl Into<String>) -> Problem {
    Problem::Invalid(message.into())
}

/// Reads a `.npy` header from the start of a file.
///
/// `bytes` may hold more than the header (the data that follows is not
/// looked at). Any padding is accepted, not only NumPy's 64 bytes.
///
/// ```
/// use dist_io::npy::{decode, encode, Problem};
/// use dist_io::ElementType;
/// use procgrid::Order;
///
/// let preamble = encode(ElementType::I32, Order::RowMajor, &[4096, 4096]);
/// let header = decode(&preamble).unwrap();
/// assert_eq!((header.element, header.order), (ElementType::I32, Order::RowMajor));
/// assert_eq!(header.data_offset, 128);
///
/// // Too few bytes: how many are needed.
/// assert_eq!(decode(&preamble[..20]), Err(Problem::NeedBytes(128)));
/// // Not a .npy file at all.
/// assert!(matches!(decode(b"PK\x03\x04"), Err(Problem::Invalid(_))));
/// ```
///
/// # Errors
///
/// - [`Problem::NeedBytes`] when `bytes` ends before the header does (or
///   before its length is known);
/// - [`Problem::Invalid`] when the bytes are not a `.npy` header this crate
///   reads: a wrong magic string, a version other than 1.0, 2.0 or 3.0,
///   header text that is not ASCII (UTF-8 in version 3.0), a dict that does
///   not hold exactly `descr`, `fortran_order` and `shape`, a structured or
///   unsupported element type, a 0-dimensional shape, a shape of more than
///   2^64 elements or bytes, or header text not ended by a newline.
pub fn decode(bytes: &[u8]) -> Result<Header, Problem> {
    check_magic(bytes)?;
    let version = match bytes.get(MAGIC.len()..VERSION_END) {
        Some(&[major, minor]) => (major, minor),
        // The version is unknown: a version 1.0 file needs the fewest bytes.
        _ => return Err(Problem::NeedBytes(VERSION_END + 2)),
    };
    let prefix = VERSION_END + length_field_width(version)?;
    let field = bytes
        .get(VERSION_END..prefix)
        .ok_or(Problem::NeedBytes(prefix))?;
    let data_offset = prefix
        .checked_add(read_length(field)?)
        .ok_or_else(|| invalid("the header length is larger than this machine can address"))?;
    let raw = bytes
        .get(prefix..data_offset)
        .ok_or(Problem::NeedBytes(data_offset))?;
    let fields = parse_header(header_text(raw, version)?)?;
    let element = ElementType::from_npy_descr(&fields.descr).map_err(Problem::Invalid)?;
    check_shape(&fields.shape, element)?;
    Ok(Header {
        element,
        order: if fields.fortran_order {
            Order::ColumnMajor
        } else {
            Order::RowMajor
        },
        shape: fields.shape,
        version,
        data_offset,
    })
}

/// Writes the preamble of a `.npy` file holding an array of `shape` with
/// elements of type `element` stored in `order`: exactly the bytes
/// `numpy.save` writes before the data of such an array (checked against
/// NumPy 1.24), so the data follows immediately.
///
/// The version is 1.0 when the header length fits in 16 bits, 2.0 otherwise
/// (a shape of thousands of dimensions). The preamble is padded with spaces
/// and a final newline to a multiple of 64 bytes. A 1-dimensional shape is
/// written `(5,)`; an empty shape is written `()`, as NumPy writes a
/// 0-dimensional array, though [`decode`] refuses it.
///
/// ```
/// use dist_io::npy::{encode, MAGIC};
/// use dist_io::ElementType;
/// use procgrid::Order;
/// let preamble = encode(ElementType::F64, Order::RowMajor, &[3, 4]);
/// assert_eq!(preamble.len(), 128);
/// assert_eq!(&preamble[..8], b"\x93NUMPY\x01\x00");
/// assert!(preamble[10..].starts_with(b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }"));
/// assert_eq!(preamble.last(), Some(&b'\n'));
/// ```
///
/// # Panics
///
/// If the header would be longer than 4 GiB, the most a version 2.0 length
/// field can say: a shape of over a billion dimensions.
pub fn encode(element: ElementType, order: Order, shape: &[usize]) -> Vec<u8> {
    let dict = dict_text(element, order, shape);
    wrap(1, dict.as_bytes())
        .or_else(|| wrap(2, dict.as_bytes()))
        .expect("a .npy header of over 4 GiB (a shape of over a billion dimensions)")
}

/// The bytes of data that follow the header: the number of elements (the
/// product of the extents) times the element size, or `None` when that
/// exceeds `u64`. A header [`decode`] returns always has a size.
///
/// ```
/// use dist_io::npy::{data_bytes, decode, encode};
/// use dist_io::ElementType;
/// use procgrid::Order;
/// let header = decode(&encode(ElementType::C32, Order::RowMajor, &[10, 0, 3])).unwrap();
/// assert_eq!(data_bytes(&header), Some(0));
/// let header = decode(&encode(ElementType::C32, Order::RowMajor, &[10, 20])).unwrap();
/// assert_eq!(data_bytes(&header), Some(1600));
/// ```
pub fn data_bytes(header: &Header) -> Option<u64> {
    element_count(&header.shape)?.checked_mul(u64::try_from(header.element.size()).ok()?)
}

/// The product of the extents, or `None` when it exceeds `u64`.
fn element_count(shape: &[usize]) -> Option<u64> {
    shape.iter().try_fold(1u64, |count, &extent| {
        count.checked_mul(u64::try_from(extent).ok()?)
    })
}

// ---------------------------------------------------------------------------
// The preamble around the header text.
// ---------------------------------------------------------------------------

/// Refuses bytes whose start (as much of it as there is) is not [`MAGIC`].
fn check_magic(bytes: &[u8]) -> Result<(), Problem> {
    let start = bytes.get(..MAGIC.len()).unwrap_or(bytes);
    if MAGIC.starts_with(start) {
        return Ok(());
    }
    let hint = if bytes.starts_with(b"PK\x03\x04") {
        "; it looks like a zip archive, such as a .npz file, whose members are .npy files"
    } else {
        ""
    };
    Err(invalid(format!(
        "not a .npy file: it does not start with \\x93NUMPY but with b\"{}\"{hint}",
        start.escape_ascii()
    )))
}

/// The width in bytes of the header-length field of a format version, or
/// why the version is not read.
fn length_field_width(version: (u8, u8)) -> Result<usize, Problem> {
    match version {
        (1, 0) => Ok(2),
        (2, 0) | (3, 0) => Ok(4),
        (major, minor) => Err(invalid(format!(
            "unsupported .npy format version {major}.{minor}; versions 1.0, 2.0 and 3.0 are read"
        ))),
    }
}

/// The header length a little-endian length field of 2 or 4 bytes says.
fn read_length(field: &[u8]) -> Result<usize, Problem> {
    let length = field
        .iter()
        .rev()
        .fold(0u32, |length, &byte| (length << 8) | u32::from(byte));
    usize::try_from(length).map_err(|_| {
        invalid(format!(
            "the header length {length} is larger than this machine can address"
        ))
    })
}

/// The header text: ASCII in versions 1.0 and 2.0, UTF-8 in version 3.0.
fn header_text(raw: &[u8], version: (u8, u8)) -> Result<&str, Problem> {
    let (major, minor) = version;
    if major < 3 {
        if let Some(at) = raw.iter().position(|byte| !byte.is_ascii()) {
            return Err(invalid(format!(
                "the header of a version {major}.{minor} file is not ASCII (byte {:#04x} at \
                 header offset {at}); only version 3.0 headers may hold UTF-8 text",
                raw.get(at).copied().unwrap_or_default()
            )));
        }
    }
    std::str::from_utf8(raw).map_err(|error| {
        invalid(format!(
            "the header of a version {major}.{minor} file is not UTF-8 text (invalid bytes at \
             header offset {})",
            error.valid_up_to()
        ))
    })
}

/// The dict text NumPy writes for an array, with the room it leaves to grow
/// the extent of the axis an append would grow.
fn dict_text(element: ElementType, order: Order, shape: &[usize]) -> String {
    let fortran = order == Order::ColumnMajor;
    let mut text = format!(
        "{{'descr': '{}', 'fortran_order': {}, 'shape': {}, }}",
        element.npy_descr(),
        if fortran { "True" } else { "False" },
        python_tuple(shape)
    );
    let growth_axis = if fortran { shape.last() } else { shape.first() };
    if let Some(extent) = growth_axis {
        let digits = extent.to_string().len();
        text.push_str(&" ".repeat(GROWTH_AXIS_MAX_DIGITS.saturating_sub(digits)));
    }
    text
}

/// `shape` as Python writes a tuple: `()`, `(5,)`, `(3, 4)`.
fn python_tuple(shape: &[usize]) -> String {
    let extents: Vec<String> = shape.iter().map(usize::to_string).collect();
    match extents.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", extents.join(", ")),
    }
}

/// `shape` for a message: as a tuple, or by its dimension count when long.
fn shape_for_message(shape: &[usize]) -> String {
    if shape.len() <= SHAPE_SHOWN_DIMS {
        format!("shape {}", python_tuple(shape))
    } else {
        format!("{}-dimensional shape", shape.len())
    }
}

/// The preamble of a format version with major number `major` (1 or 2)
/// around `dict`, padded as NumPy pads it; `None` when the header length
/// does not fit that version's length field.
fn wrap(major: u8, dict: &[u8]) -> Option<Vec<u8>> {
    let width = if major == 1 { 2 } else { 4 };
    let prefix = VERSION_END + width;
    // NumPy always pads, with 1 to 64 spaces, before the final newline.
    let padding = ALIGN - (prefix + dict.len() + 1) % ALIGN;
    let header_len = dict.len() + padding + 1;
    let field = u32::try_from(header_len).ok()?.to_le_bytes();
    let (used, unused) = field.split_at(width);
    if unused.iter().any(|&byte| byte != 0) {
        return None;
    }
    let mut bytes = Vec::with_capacity(prefix + header_len);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&[major, 0]);
    bytes.extend_from_slice(used);
    bytes.extend_from_slice(dict);
    bytes.resize(bytes.len() + padding, b' ');
    bytes.push(b'\n');
    Some(bytes)
}

/// Refuses shapes this crate cannot lay out or address.
fn check_shape(shape: &[usize], element: ElementType) -> Result<(), Problem> {
    if shape.is_empty() {
        return Err(invalid(
            "a 0-dimensional array (shape ()) has no layout; save it with at least one dimension",
        ));
    }
    let count = element_count(shape).ok_or_else(|| {
        invalid(format!(
            "the {} has more than 2^64 elements",
            shape_for_message(shape)
        ))
    })?;
    let size = u64::try_from(element.size()).ok();
    if size.and_then(|size| count.checked_mul(size)).is_none() {
        return Err(invalid(format!(
            "the {} of {count} elements of {} bytes holds more than 2^64 bytes",
            shape_for_message(shape),
            element.size()
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The header text: a Python dict literal, parsed without evaluating it.
// ---------------------------------------------------------------------------

/// The three values of a header dict, as written.
#[derive(Debug)]
struct Fields {
    descr: String,
    fortran_order: bool,
    shape: Vec<usize>,
}

/// Reads the dict, then checks that only spaces and the final newline follow.
fn parse_header(text: &str) -> Result<Fields, Problem> {
    let mut cursor = Cursor { text, pos: 0 };
    let fields = cursor.dict()?;
    cursor.end()?;
    Ok(fields)
}

/// Whitespace Python allows between the tokens of a dict literal.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c')
}

/// A position in the header text. `pos` is always at a character boundary:
/// it only moves past whole characters.
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// The text not read yet.
    fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or_default()
    }

    /// Moves past whitespace.
    fn skip_space(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start_matches(is_space).len();
    }

    /// The next character after whitespace, not consumed.
    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.rest().chars().next()
    }

    /// Consumes `c` if it is the next character after whitespace.
    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.pos += c.len_utf8();
        }
        found
    }

    /// What follows, for a message: the start of the remaining text, quoted.
    fn found(&mut self) -> String {
        const SHOWN: usize = 16;
        self.skip_space();
        let rest = self.rest();
        if rest.is_empty() {
            return "the end of the header".to_string();
        }
        let shown: String = rest.chars().take(SHOWN).collect();
        let more = if rest.chars().nth(SHOWN).is_some() {
            "..."
        } else {
            ""
        };
        format!("\"{}{more}\"", shown.escape_debug())
    }

    /// A refusal saying `expected` was expected where the cursor is.
    fn expected(&mut self, expected: &str) -> Problem {
        invalid(format!("expected {expected}, found {}", self.found()))
    }

    /// `{ key: value, ... }` with exactly the keys of [`KEYS`], each once.
    fn dict(&mut self) -> Result<Fields, Problem> {
        if !self.eat('{') {
            return Err(self.expected("the header to be a Python dict literal starting with '{'"));
        }
        let mut seen = [false; KEYS.len()];
        let mut descr = None;
        let mut fortran_order = None;
        let mut shape = None;
        while !self.eat('}') {
            let key = self.key()?;
            let index = KEYS.iter().position(|&k| k == key).ok_or_else(|| {
                invalid(format!(
                    "unexpected key {key:?} in the header; expected exactly 'descr', \
                     'fortran_order' and 'shape'"
                ))
            })?;
            if std::mem::replace(&mut seen[index], true) {
                return Err(invalid(format!("key '{key}' appears twice in the header")));
            }
            if !self.eat(':') {
                return Err(self.expected(&format!("':' after the key '{key}'")));
            }
            match index {
                0 => descr = Some(self.descr()?),
                1 => fortran_order = Some(self.boolean()?),
                _ => shape = Some(self.shape()?),
            }
            if !self.eat(',') && self.peek() != Some('}') {
                return Err(self.expected(&format!("',' or '}}' after the value of '{key}'")));
            }
        }
        Ok(Fields {
            descr: descr.ok_or_else(|| missing("descr"))?,
            fortran_order: fortran_order.ok_or_else(|| missing("fortran_order"))?,
            shape: shape.ok_or_else(|| missing("shape"))?,
        })
    }

    /// A quoted key.
    fn key(&mut self) -> Result<String, Problem> {
        match self.string()? {
            Some(key) => Ok(key),
            None => Err(self.expected("a quoted key or '}' in the header dict")),
        }
    }

    /// The value of `descr`: a type string. A list is a structured dtype.
    fn descr(&mut self) -> Result<String, Problem> {
        if let Some(descr) = self.string()? {
            return Ok(descr);
        }
        if self.peek() == Some('[') {
            return Err(invalid(
                "structured arrays (record dtypes) are not read: 'descr' is a list of fields; \
                 save each field as an array of its own",
            ));
        }
        Err(self.expected("a type string such as '<f8' as the value of 'descr'"))
    }

    /// The value of `fortran_order`: `True` or `False`.
    fn boolean(&mut self) -> Result<bool, Problem> {
        self.skip_space();
        let rest = self.rest();
        let word_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let value = match rest.get(..word_len) {
            Some("True") => true,
            Some("False") => false,
            _ => return Err(self.expected("True or False as the value of 'fortran_order'")),
        };
        self.pos += word_len;
        Ok(value)
    }

    /// The value of `shape`: a tuple of non-negative integers, `()`,
    /// `(5,)` or `(3, 4)`, perhaps with a trailing comma.
    fn shape(&mut self) -> Result<Vec<usize>, Problem> {
        if !self.eat('(') {
            return Err(self.expected("a tuple of integers such as (3, 4) as the value of 'shape'"));
        }
        let mut shape = Vec::new();
        if self.eat(')') {
            return Ok(shape);
        }
        loop {
            shape.push(self.extent()?);
            let comma = self.eat(',');
            if self.eat(')') {
                if !comma && shape.len() == 1 {
                    return Err(invalid(format!(
                        "the shape ({0}) is an integer in parentheses, not a tuple; a \
                         1-dimensional shape is written ({0},)",
                        shape.first().copied().unwrap_or_default()
                    )));
                }
                return Ok(shape);
            }
            if !comma {
                return Err(self.expected("',' or ')' in the shape"));
            }
        }
    }

    /// A non-negative decimal integer, perhaps followed by the `L` with which
    /// Python 2 wrote long integers.
    fn extent(&mut self) -> Result<usize, Problem> {
        self.skip_space();
        let rest = self.rest();
        let digits_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let digits = rest.get(..digits_len).unwrap_or_default();
        if digits.is_empty() {
            if rest.starts_with('-') {
                return Err(invalid(format!(
                    "the shape holds a negative extent, found {}",
                    self.found()
                )));
            }
            return Err(self.expected("a non-negative integer in the shape"));
        }
        let extent = digits.parse::<usize>().map_err(|_| {
            let shown: String = digits.chars().take(40).collect();
            let more = if digits.len() > shown.len() {
                "..."
            } else {
                ""
            };
            invalid(format!(
                "the extent {shown}{more} in the shape is too large: the largest is {}",
                usize::MAX
            ))
        })?;
        self.pos += digits_len;
        if self.rest().starts_with('L') {
            self.pos += 1;
        }
        Ok(extent)
    }

    /// A string in single or double quotes, without escape sequences; `None`
    /// when no quote is next.
    fn string(&mut self) -> Result<Option<String>, Problem> {
        let quote = match self.peek() {
            Some(quote @ ('\'' | '"')) => quote,
            _ => return Ok(None),
        };
        let body_start = self.pos + quote.len_utf8();
        let body = self.text.get(body_start..).unwrap_or_default();
        match body
            .char_indices()
            .find(|&(_, c)| matches!(c, '\\' | '\n') || c == quote)
        {
            Some((end, c)) if c == quote => {
                self.pos = body_start + end + quote.len_utf8();
                Ok(Some(body.get(..end).unwrap_or_default().to_string()))
            }
            Some((_, '\\')) => Err(invalid(format!(
                "a string in the header holds a backslash; escape sequences are not read, \
                 found {}",
                self.found()
            ))),
            _ => Err(invalid(format!(
                "a string in the header has no closing quote on its line, found {}",
                self.found()
            ))),
        }
    }

    /// Checks that only whitespace follows the dict, ending with a newline.
    fn end(&mut self) -> Result<(), Problem> {
        if self.peek().is_some() {
            return Err(self.expected("only spaces and a newline after the header dict"));
        }
        if !self.text.ends_with('\n') {
            return Err(invalid(
                "the header does not end with a newline; .npy headers end with '\\n' after \
                 their padding",
            ));
        }
        Ok(())
    }
}

/// A refusal of a dict without `key`.
fn missing(key: &str) -> Problem {
    invalid(format!(
        "the header has no '{key}' key; expected exactly 'descr', 'fortran_order' and 'shape'"
    ))
}

#[cfg(test)]
mod tests;
