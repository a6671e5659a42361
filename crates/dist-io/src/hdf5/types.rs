//! Element types as HDF5 datatypes: little-endian numbers, and complex
//! numbers as h5py writes them (a compound of two floats named `r` and
//! `i`, which h5py and NumPy read as `complex64` / `complex128`).
//!
//! Public (feature `hdf5`) for programs that write or read with HDF5's
//! own calls the datasets dist-io reads or writes, such as `redist io
//! --baseline hdf5`:
//!
//! ```
//! use dist_io::hdf5::types::{datatype, descriptor};
//! use dist_io::ElementType;
//! use hdf5::types::TypeDescriptor;
//! // Complex numbers as h5py writes them: a compound of `r` and `i`.
//! let TypeDescriptor::Compound(c) = descriptor(ElementType::C64) else { panic!() };
//! let fields: Vec<&str> = c.fields.iter().map(|f| f.name.as_str()).collect();
//! assert_eq!(fields, ["r", "i"]);
//! assert_eq!(datatype(ElementType::C64).unwrap().size(), 16);
//! ```

use crate::element::{ElementType, ALL};
use hdf5::types::{CompoundField, CompoundType, FloatSize, IntSize, TypeDescriptor};
use hdf5::Datatype;

/// The HDF5 type of `element` (native, so little-endian here), as dist-io
/// writes it.
pub fn descriptor(element: ElementType) -> TypeDescriptor {
    use TypeDescriptor as D;
    let complex = |float: FloatSize, bytes: usize| {
        D::Compound(CompoundType {
            fields: vec![
                CompoundField::new("r", D::Float(float), 0, 0),
                CompoundField::new("i", D::Float(float), bytes, 1),
            ],
            size: 2 * bytes,
        })
    };
    match element {
        ElementType::F32 => D::Float(FloatSize::U4),
        ElementType::F64 => D::Float(FloatSize::U8),
        ElementType::I32 => D::Integer(IntSize::U4),
        ElementType::I64 => D::Integer(IntSize::U8),
        ElementType::U8 => D::Unsigned(IntSize::U1),
        ElementType::U32 => D::Unsigned(IntSize::U4),
        ElementType::U64 => D::Unsigned(IntSize::U8),
        ElementType::C32 => complex(FloatSize::U4, 4),
        ElementType::C64 => complex(FloatSize::U8, 8),
    }
}

/// The HDF5 datatype of `element`: its [`descriptor`]'s.
///
/// # Errors
///
/// HDF5's, when it cannot make the datatype.
pub fn datatype(element: ElementType) -> hdf5::Result<Datatype> {
    Datatype::from_descriptor(&descriptor(element))
}

/// The element type of a dataset's datatype: one equal to the datatype of
/// an [`ElementType`] (same class, size, byte order and, for complex
/// numbers, the same fields), or a sentence saying why none is.
pub(super) fn element_of(dtype: &Datatype) -> Result<ElementType, String> {
    for element in ALL {
        if datatype(element).is_ok_and(|d| d == *dtype) {
            return Ok(element);
        }
    }
    let expected = format!(
        "expected one of {} (little-endian; complex numbers as h5py writes them, a compound \
         of fields r and i)",
        ALL.map(ElementType::numpy_name).join(", ")
    );
    let described = dtype.to_descriptor();
    let big = matches!(dtype.byte_order(), hdf5::datatype::ByteOrder::BigEndian);
    Err(match described {
        Ok(d) if big => format!(
            "its elements are big-endian {d}; only little-endian data is read (convert with \
             h5py: f.create_dataset(name, data=a.astype(a.dtype.newbyteorder('<'))))"
        ),
        Ok(
            d @ (TypeDescriptor::FixedAscii(_)
            | TypeDescriptor::FixedUnicode(_)
            | TypeDescriptor::VarLenAscii
            | TypeDescriptor::VarLenUnicode),
        ) => format!("its elements are strings ({d}), not numbers; {expected}"),
        Ok(TypeDescriptor::Compound(c)) => {
            let fields: Vec<String> = (c.fields.iter())
                .map(|f| format!("{}: {}", f.name, f.ty))
                .collect();
            format!(
                "its elements are a compound of {{{}}}, not complex numbers; {expected}",
                fields.join(", ")
            )
        }
        Ok(d) => format!("its elements are {d}, which no ndcyclic element type is; {expected}"),
        Err(e) => format!("its element type is not one this library reads ({e}); {expected}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_type_is_its_own_hdf5_type() {
        for t in ALL {
            let d = datatype(t).unwrap();
            assert_eq!(d.size(), t.size(), "{t}");
            assert_eq!(element_of(&d), Ok(t));
        }
    }

    #[test]
    fn other_types_are_refused_with_a_reason() {
        let half = Datatype::from_descriptor(&TypeDescriptor::Integer(IntSize::U2)).unwrap();
        let e = element_of(&half).unwrap_err();
        assert!(e.contains("no ndcyclic element type"), "{e}");
        let text = Datatype::from_descriptor(&TypeDescriptor::VarLenUnicode).unwrap();
        assert!(element_of(&text).unwrap_err().contains("strings"));
        let pair = TypeDescriptor::Compound(CompoundType {
            fields: vec![
                CompoundField::new("re", TypeDescriptor::Float(FloatSize::U8), 0, 0),
                CompoundField::new("im", TypeDescriptor::Float(FloatSize::U8), 8, 1),
            ],
            size: 16,
        });
        let e = element_of(&Datatype::from_descriptor(&pair).unwrap()).unwrap_err();
        assert!(e.contains("compound of {re"), "{e}");
    }
}
