//! The text of a caught panic, for the few boundaries that turn a panic in a dependency (burn's
//! decoder or backend, a worker thread) into an error.

use std::any::Any;

/// The message a panic carried (`panic!("...")` gives a `&str` or a `String`), if any.
pub fn panic_message(payload: &(dyn Any + Send)) -> Option<String> {
    if let Some(s) = payload.downcast_ref::<&str>() {
        Some((*s).to_string())
    } else {
        payload.downcast_ref::<String>().cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_str_and_string_payloads() {
        let p = std::panic::catch_unwind(|| panic!("plain")).expect_err("panics");
        assert_eq!(panic_message(&*p).as_deref(), Some("plain"));
        let n = 3;
        let p = std::panic::catch_unwind(|| panic!("formatted {n}")).expect_err("panics");
        assert_eq!(panic_message(&*p).as_deref(), Some("formatted 3"));
        let p = std::panic::catch_unwind(|| std::panic::panic_any(7u8)).expect_err("panics");
        assert_eq!(panic_message(&*p), None);
    }
}
