//! Builds `shim/yield_when_idle.c` into `yield_when_idle.so` in `OUT_DIR`
//! with the system's C compiler (`CC`, default `cc`) and hands its path to
//! the harness as `NDCYCLIC_YIELD_SHIM` (empty when it cannot be built: the
//! launches then run without it, slower on oversubscribed cores, alike in
//! what they test).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let source = "shim/yield_when_idle.c";
    println!("cargo:rerun-if-changed={source}");
    println!("cargo:rerun-if-env-changed=CC");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("yield_when_idle.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let built = Command::new(&cc)
        .args(["-O2", "-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(source)
        .arg("-ldl")
        .status();
    match built {
        Ok(status) if status.success() => {
            println!("cargo:rustc-env=NDCYCLIC_YIELD_SHIM={}", out.display());
        }
        other => {
            println!("cargo:warning={cc} could not build {source} ({other:?}): MPI test launches will spin while they wait");
            println!("cargo:rustc-env=NDCYCLIC_YIELD_SHIM=");
        }
    }
}
