//! The `clinv` binary: everything lives in the library.

fn main() {
    std::process::exit(clinv::main());
}
