//! Element types as files describe them: NumPy's type strings and the
//! names the `redist` tool uses.

use dist_array::Element;

/// The element type of a file's array, one per [`Element`] type.
///
/// ```
/// use dist_io::ElementType;
/// assert_eq!(ElementType::of::<f64>(), ElementType::F64);
/// assert_eq!(ElementType::F64.npy_descr(), "<f8");
/// assert_eq!(ElementType::from_npy_descr("|u1"), Ok(ElementType::U8));
/// assert_eq!(ElementType::C64.size(), 16);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// `f32`, NumPy `float32`.
    F32,
    /// `f64`, NumPy `float64`.
    F64,
    /// `i32`, NumPy `int32`.
    I32,
    /// `i64`, NumPy `int64`.
    I64,
    /// `u8`, NumPy `uint8`.
    U8,
    /// `u32`, NumPy `uint32`.
    U32,
    /// `u64`, NumPy `uint64`.
    U64,
    /// `Complex<f32>`, NumPy `complex64`.
    C32,
    /// `Complex<f64>`, NumPy `complex128`.
    C64,
}

/// Every element type, in the order of [`ElementType`]'s variants.
pub const ALL: [ElementType; 9] = [
    ElementType::F32,
    ElementType::F64,
    ElementType::I32,
    ElementType::I64,
    ElementType::U8,
    ElementType::U32,
    ElementType::U64,
    ElementType::C32,
    ElementType::C64,
];

impl ElementType {
    /// The element type of `T`.
    pub fn of<T: Element>() -> ElementType {
        // Element is implemented for exactly the types of ALL; their names
        // are the tool's.
        ElementType::from_name(T::NAME).expect("every Element type has a file type")
    }

    /// The type `redist` names `name` (`f32`, `f64`, `i32`, `i64`, `u8`,
    /// `u32`, `u64`, `c32`, `c64`), as [`Element::NAME`] spells it.
    pub fn from_name(name: &str) -> Option<ElementType> {
        ALL.into_iter().find(|t| t.name() == name)
    }

    /// The name `redist` uses: [`Element::NAME`] of the Rust type.
    pub fn name(self) -> &'static str {
        match self {
            ElementType::F32 => "f32",
            ElementType::F64 => "f64",
            ElementType::I32 => "i32",
            ElementType::I64 => "i64",
            ElementType::U8 => "u8",
            ElementType::U32 => "u32",
            ElementType::U64 => "u64",
            ElementType::C32 => "c32",
            ElementType::C64 => "c64",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            ElementType::U8 => 1,
            ElementType::F32 | ElementType::I32 | ElementType::U32 => 4,
            ElementType::F64 | ElementType::I64 | ElementType::U64 | ElementType::C32 => 8,
            ElementType::C64 => 16,
        }
    }

    /// NumPy's type string, little-endian, as `numpy.save` writes it.
    pub fn npy_descr(self) -> &'static str {
        match self {
            ElementType::F32 => "<f4",
            ElementType::F64 => "<f8",
            ElementType::I32 => "<i4",
            ElementType::I64 => "<i8",
            ElementType::U8 => "|u1",
            ElementType::U32 => "<u4",
            ElementType::U64 => "<u8",
            ElementType::C32 => "<c8",
            ElementType::C64 => "<c16",
        }
    }

    /// The NumPy dtype name (`float64`, `complex64`, ...).
    pub fn numpy_name(self) -> &'static str {
        match self {
            ElementType::F32 => "float32",
            ElementType::F64 => "float64",
            ElementType::I32 => "int32",
            ElementType::I64 => "int64",
            ElementType::U8 => "uint8",
            ElementType::U32 => "uint32",
            ElementType::U64 => "uint64",
            ElementType::C32 => "complex64",
            ElementType::C64 => "complex128",
        }
    }

    /// The element type of a NumPy type string: a byte-order character
    /// (`<` little-endian, `|` not applicable, `=` native, which is
    /// little-endian on every machine this crate builds for) followed by a
    /// kind and a size. Single bytes take any byte-order character.
    ///
    /// # Errors
    ///
    /// A sentence saying what is wrong: big-endian data, an object or
    /// structured array, or a type no [`Element`] matches.
    pub fn from_npy_descr(descr: &str) -> Result<ElementType, String> {
        let mut chars = descr.chars();
        let order = chars
            .next()
            .ok_or_else(|| "an empty type string".to_string())?;
        let code = chars.as_str();
        let single = matches!(code, "u1" | "b1" | "i1");
        match order {
            '<' | '|' | '=' => {}
            '>' if single => {}
            '>' => {
                return Err(format!(
                    "type {descr:?} is big-endian; only little-endian files are read \
                     (convert with numpy: a.astype(a.dtype.newbyteorder('<')))"
                ))
            }
            _ => {
                return Err(format!(
                    "type {descr:?} is not a NumPy type string of a plain number \
                     (expected e.g. '<f8')"
                ))
            }
        }
        if code.starts_with('O') {
            return Err(format!(
                "type {descr:?} is an object array (Python objects); only arrays of \
                 numbers are read"
            ));
        }
        ALL.into_iter()
            .find(|t| &t.npy_descr()[1..] == code)
            .ok_or_else(|| {
                format!(
                    "type {descr:?} has no ndcyclic element type; expected one of {}",
                    ALL.map(|t| t.npy_descr()).join(", ")
                )
            })
    }
}

impl std::fmt::Display for ElementType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dist_array::Complex;

    #[test]
    fn every_element_type_has_its_file_type() {
        assert_eq!(ElementType::of::<f32>(), ElementType::F32);
        assert_eq!(ElementType::of::<u64>(), ElementType::U64);
        assert_eq!(ElementType::of::<Complex<f32>>(), ElementType::C32);
        assert_eq!(ElementType::of::<Complex<f64>>(), ElementType::C64);
        assert_eq!(std::mem::size_of::<Complex<f64>>(), ElementType::C64.size());
    }

    #[test]
    fn type_strings_round_trip() {
        for t in ALL {
            assert_eq!(ElementType::from_npy_descr(t.npy_descr()), Ok(t));
            assert_eq!(ElementType::from_name(t.name()), Some(t));
        }
        assert_eq!(ElementType::from_npy_descr("<u1"), Ok(ElementType::U8));
        assert_eq!(ElementType::from_npy_descr("=f8"), Ok(ElementType::F64));
    }

    #[test]
    fn unreadable_types_say_why() {
        let big = ElementType::from_npy_descr(">f8").unwrap_err();
        assert!(big.contains("big-endian"), "{big}");
        let object = ElementType::from_npy_descr("|O").unwrap_err();
        assert!(object.contains("object"), "{object}");
        let half = ElementType::from_npy_descr("<f2").unwrap_err();
        assert!(half.contains("no ndcyclic element type"), "{half}");
        assert!(ElementType::from_npy_descr("").is_err());
        assert!(ElementType::from_npy_descr("f8").is_err());
    }
}
