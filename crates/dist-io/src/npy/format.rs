//! `.npy` files as a file format ([`Npy`]): recognised by their magic
//! string, the header read whole by rank 0 and decoded by every rank, the
//! array's bytes after it moved through MPI-IO (`raw_file.rs`).

use super::{data_bytes, decode, encode, Problem, MAGIC};
use crate::element::ElementType;
use crate::error::{name, IoError};
use crate::file_format::{FileFormat, RawHeader};
use crate::file_info::FileInfo;
use crate::options::Format;
use procgrid::Order;
use std::io::Read;
use std::path::Path;

/// NumPy's `.npy`: [`Format::Npy`].
pub(crate) struct Npy;

impl FileFormat for Npy {
    fn name(&self) -> &'static str {
        "npy"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["npy"]
    }

    fn description(&self) -> &'static str {
        "a .npy file (first bytes \\x93NUMPY)"
    }

    fn recognizes(&self, head: &[u8]) -> bool {
        head.starts_with(MAGIC)
    }

    fn format(&self) -> Format {
        Format::Npy
    }

    fn header(&self, mut head: Vec<u8>, file: &mut std::fs::File) -> std::io::Result<Vec<u8>> {
        // A header longer than 4 KiB: read what its length field asks.
        if let Err(Problem::NeedBytes(n)) = decode(&head) {
            if n > head.len() && n <= (1 << 30) {
                let more = n - head.len();
                file.take(more as u64).read_to_end(&mut head)?;
            }
        }
        Ok(head)
    }

    fn info(&self, path: &Path, _: &Format, header: &RawHeader) -> Result<FileInfo, IoError> {
        npy_info(path, &header.bytes, header.file_bytes)
    }

    fn new_header(&self, element: ElementType, order: Order, shape: &[usize]) -> Vec<u8> {
        encode(element, order, shape)
    }
}

/// The info of a `.npy` file from its first bytes and size (the same
/// verdict on every rank that holds the same bytes).
fn npy_info(path: &Path, head: &[u8], size: u64) -> Result<FileInfo, IoError> {
    let header = decode(head).map_err(|p| IoError::Header {
        path: name(path),
        reason: match p {
            Problem::Invalid(why) => why,
            Problem::NeedBytes(n) => format!(
                "the file ends inside its .npy header ({} bytes, the header needs {n})",
                head.len()
            ),
        },
    })?;
    let info = FileInfo {
        format: Format::Npy,
        element: header.element,
        shape: header.shape.clone(),
        order: header.order,
        data_offset: Some(header.data_offset as u64),
        version: Some(header.version),
        file_bytes: size,
        layout: None,
    };
    let expected = data_bytes(&header).ok_or_else(|| IoError::Header {
        path: name(path),
        reason: format!("shape {:?} holds more bytes than a file can", header.shape),
    })?;
    let offset = header.data_offset as u64;
    if offset.checked_add(expected).is_none_or(|end| end > size) {
        return Err(IoError::Truncated {
            path: name(path),
            expected,
            offset,
            actual: size,
        });
    }
    Ok(info)
}
