//! What a file's header says of its array ([`FileInfo`]), and how it
//! reads (`npy 1.0, f64, shape 4096x4096, C order, data from byte 128`).

use crate::element::ElementType;
use crate::options::Format;
use procgrid::Order;

/// What a file's header says of its array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// The format (for HDF5, with the dataset read).
    pub format: Format,
    /// The element type.
    pub element: ElementType,
    /// The array's shape.
    pub shape: Vec<usize>,
    /// The order of the array's elements in the file: row-major is C
    /// order, column-major Fortran order.
    pub order: Order,
    /// Where the data starts (`.npy`: the header's length; HDF5: `None`,
    /// the library places it).
    pub data_offset: Option<u64>,
    /// The format's version (`.npy`: 1.0, 2.0 or 3.0).
    pub version: Option<(u8, u8)>,
    /// The file's size in bytes.
    pub file_bytes: u64,
    /// The layout the array was saved from, where the file records it (an
    /// HDF5 attribute `layout`, as a spec string).
    pub layout: Option<String>,
}

impl FileInfo {
    /// Bytes of the array's data.
    pub fn data_bytes(&self) -> Option<u64> {
        (self.shape.iter()).try_fold(self.element.size() as u64, |a, &n| a.checked_mul(n as u64))
    }

    /// The element count.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Display for FileInfo {
    /// `npy 1.0, f64, shape 4096x4096, C order, data from byte 128`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shape: Vec<String> = self.shape.iter().map(usize::to_string).collect();
        let order = match self.order {
            Order::RowMajor => "C",
            Order::ColumnMajor => "Fortran",
        };
        write!(f, "{}", self.format.name())?;
        if let Some((major, minor)) = self.version {
            write!(f, " {major}.{minor}")?;
        }
        if let Some(details) = self.format.details() {
            write!(f, " {details}")?;
        }
        write!(
            f,
            ", {}, shape {}, {order} order",
            self.element,
            shape.join("x")
        )?;
        if let Some(at) = self.data_offset {
            write!(f, ", data from byte {at}")?;
        }
        if let Some(layout) = &self.layout {
            write!(f, ", saved from {layout}")?;
        }
        Ok(())
    }
}
