//! Off Linux nothing is shared: every local part lives on the heap and
//! redistributions move data as messages.

use super::SharedStorage;
use std::io;

pub struct File {
    pub ptr: *mut u8,
    pub fd: i32,
    pub dev: u64,
    pub ino: u64,
}

pub fn create(_bytes: usize) -> Option<File> {
    None
}

/// Nothing can be mapped off Linux.
///
/// # Errors
///
/// - [`Unsupported`](io::ErrorKind::Unsupported), always.
pub fn map_read_only(_s: &SharedStorage) -> io::Result<*const u8> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "shared storage needs Linux",
    ))
}

/// Nothing can be mapped off Linux.
///
/// # Errors
///
/// - [`Unsupported`](io::ErrorKind::Unsupported), always.
pub fn map_read_write(_s: &SharedStorage) -> io::Result<*mut u8> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "shared storage needs Linux",
    ))
}

pub fn still_open(_s: &SharedStorage) -> bool {
    false
}

pub fn open_files_limit() -> u64 {
    0
}

pub fn unmap(_ptr: *mut u8, _bytes: usize) {}

pub fn release(_ptr: *mut u8, _bytes: usize, _fd: i32) {}
