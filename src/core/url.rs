//! The URLs of the servers the package connects to (Redis, PostgreSQL), as messages and
//! logs may show them.

/// `url` with its password replaced by `***` (and a user name given alone, which some
/// servers take as the password); a URL without credentials as it is.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.rsplit_once('@') {
        Some((auth, host)) => match auth.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
            None => format!("{scheme}://***@{host}"),
        },
        None => url.to_string(),
    }
}
