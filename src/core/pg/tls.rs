//! TLS to PostgreSQL, when the URL asks for it (`sslmode=require`) or the caller gives a
//! certificate authority to trust (`tls_ca`): rustls, with the server's certificate checked
//! against Mozilla's roots (`webpki-roots`) and that authority, and its name against the
//! URL's host. Stricter than libpq's `require`, which encrypts without checking: a server
//! with a self-signed certificate is reached by giving its certificate as `tls_ca`.

use super::{PgCause, PgError};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The connector for a pool: the public roots, and the certificates of `ca_pem` (PEM).
pub fn connector(ca_pem: Option<&str>) -> Result<MakeRustlsConnect, PgError> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if let Some(pem) = ca_pem {
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            let cert = cert.map_err(|e| bad_ca(&format!("not a PEM certificate ({e})")))?;
            roots
                .add(cert)
                .map_err(|e| bad_ca(&format!("a certificate it holds is unusable ({e})")))?;
            added += 1;
        }
        if added == 0 {
            return Err(bad_ca("it holds no PEM certificate"));
        }
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| PgError::new(PgCause::Tls, format!("TLS cannot be set up: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

fn bad_ca(why: &str) -> PgError {
    PgError::new(
        PgCause::Tls,
        format!("the TLS certificate authority given: {why}"),
    )
}
