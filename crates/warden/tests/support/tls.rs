//! A TLS front for tests: certificates made by `openssl`, and a forwarder
//! that terminates TLS and passes the bytes on to a plain address.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A certificate authority and a certificate it signed for `localhost` and
/// `127.0.0.1`, as PEM files in a directory.
pub struct Certificates {
    /// The authority's certificate: what a client must trust.
    pub authority: PathBuf,
    /// The server's certificate.
    pub server: PathBuf,
    /// The server's private key.
    pub key: PathBuf,
}

impl Certificates {
    /// Makes an authority and a server certificate in `dir`.
    pub fn make(dir: &Path) -> Certificates {
        let file = |name: &str| dir.join(name).to_str().expect("utf-8 path").to_owned();
        let openssl = |args: &[&str]| {
            let out = Command::new("openssl").args(args).output().expect("run openssl");
            assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        let (ca_key, ca, key, csr, ext, server) = (
            file("ca.key"),
            file("ca.pem"),
            file("server.key"),
            file("server.csr"),
            file("server.ext"),
            file("server.pem"),
        );
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
        let authority =
            ["req", "-x509", "-days", "2", "-subj", "/CN=warden test authority", "-keyout", &ca_key, "-out", &ca];
        openssl(&[&authority[..], &ec[..]].concat());
        let request = ["req", "-new", "-subj", "/CN=localhost", "-keyout", &key, "-out", &csr];
        openssl(&[&request[..], &ec[..]].concat());
        std::fs::write(&ext, "subjectAltName=DNS:localhost,IP:127.0.0.1\n").expect("write the extensions");
        openssl(&[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &ext,
            "-out",
            &server,
        ]);
        Certificates { authority: ca.into(), server: server.into(), key: key.into() }
    }
}

/// Serves TLS on a free port with `certificates`, forwarding each
/// connection's bytes to `target` (`host:port`), until the test ends.
/// Returns the port.
pub fn forward(certificates: &Certificates, target: &str) -> u16 {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&certificates.server)
        .expect("read the certificate")
        .map(|c| c.expect("pem"))
        .collect();
    let key = PrivateKeyDer::from_pem_file(&certificates.key).expect("read the key");
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("server certificate");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    listener.set_nonblocking(true).expect("nonblocking");
    let target = target.to_owned();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            while let Ok((socket, _)) = listener.accept().await {
                let (acceptor, target) = (acceptor.clone(), target.clone());
                tokio::spawn(async move {
                    // A client that refuses the certificate ends the handshake: nothing to forward.
                    let Ok(mut tls) = acceptor.accept(socket).await else { return };
                    let Ok(mut plain) = tokio::net::TcpStream::connect(&target).await else { return };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
    });
    port
}
