//! Build warnings (a typo lok8s does not mind, a time that does not parse): said as
//! `[warn]`, or with `--strict` as `[error]` and a failure that stops the command.

use crate::console::Console;
use crate::error::{Error, Result};
use crate::inventory::Warning;

/// Says `warnings` (each detail at `-v`); with `strict` they are errors and stop the
/// command.
///
/// # Errors
/// [`Error::Strict`] with `strict` and a warning.
pub fn say(console: &dyn Console, strict: bool, warnings: &[Warning]) -> Result<()> {
    for w in warnings {
        if strict {
            console.error(&w.message);
        } else {
            console.warn(&w.message);
        }
        if let Some(detail) = &w.detail {
            console.debug(&format!("  reason: {detail}"));
        }
    }
    if strict && !warnings.is_empty() {
        return Err(Error::Strict(warnings.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::Recorded;

    fn warning() -> Warning {
        Warning {
            message: "w".to_string(),
            detail: Some("d".to_string()),
        }
    }

    /// A warning is a `[warn]` and its detail a `[debug]`; with `--strict` an `[error]`
    /// and a failure counting them.
    #[test]
    fn warnings_are_warnings_or_with_strict_a_failure() {
        let recorded = Recorded::default();
        say(&recorded, false, &[warning()]).unwrap();
        assert_eq!(recorded.messages(), ["[warn] w", "[debug]   reason: d"]);
        let recorded = Recorded::default();
        let failed = say(&recorded, true, &[warning(), warning()]);
        assert!(matches!(failed, Err(Error::Strict(2))));
        assert_eq!(recorded.messages()[0], "[error] w");
        assert!(say(&recorded, true, &[]).is_ok());
    }
}
