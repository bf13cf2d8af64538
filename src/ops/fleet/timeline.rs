//! The fleet timeline: what changed where, when, grouped into events.
