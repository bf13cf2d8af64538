//! Messages a library flow hands back for the command line to print: the library never
//! prints, and its warnings must still reach stderr in the order they happened.

/// How loud a notice is; `--quiet` and `-v` filter on it when printing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warn,
    Info,
    /// How a read command got its answer, when that does not change it (`-v` only).
    Detail,
    Debug,
}

/// One message line, with its level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub level: Level,
    pub text: String,
}

impl Notice {
    pub fn error(text: impl Into<String>) -> Notice {
        Notice::new(Level::Error, text)
    }

    pub fn warn(text: impl Into<String>) -> Notice {
        Notice::new(Level::Warn, text)
    }

    pub fn info(text: impl Into<String>) -> Notice {
        Notice::new(Level::Info, text)
    }

    pub fn detail(text: impl Into<String>) -> Notice {
        Notice::new(Level::Detail, text)
    }

    pub fn debug(text: impl Into<String>) -> Notice {
        Notice::new(Level::Debug, text)
    }

    fn new(level: Level, text: impl Into<String>) -> Notice {
        Notice {
            level,
            text: text.into(),
        }
    }
}
