//! The `clinv` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    // Every code clinv documents is 0..=143; anything else would be a bug, said as 1.
    std::process::ExitCode::from(u8::try_from(clinv::app::main()).unwrap_or(1))
}
