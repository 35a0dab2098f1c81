//! The loopback forwarder: `127.0.0.1:PORT` inside the sandbox to the
//! proxy's Unix socket (which is why no socat is needed).

use std::io;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

/// Listens on `127.0.0.1:port` and relays each connection to `socket`, on
/// threads of their own.
pub(super) fn start(port: u16, socket: PathBuf) -> io::Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port))?;
    std::thread::Builder::new().name("proxy-forward".into()).spawn(move || {
        for client in listener.incoming().flatten() {
            let socket = socket.clone();
            let _ = std::thread::Builder::new().spawn(move || relay(client, &socket));
        }
    })?;
    Ok(())
}

fn relay(client: TcpStream, socket: &std::path::Path) {
    let Ok(proxy) = UnixStream::connect(socket) else {
        let _ = client.shutdown(Shutdown::Both);
        return;
    };
    let (Ok(mut client_read), Ok(mut proxy_write)) = (client.try_clone(), proxy.try_clone()) else { return };
    let upstream = std::thread::spawn(move || {
        let _ = io::copy(&mut client_read, &mut proxy_write);
        let _ = proxy_write.shutdown(Shutdown::Write);
    });
    let (mut proxy_read, mut client_write) = (proxy, client);
    let _ = io::copy(&mut proxy_read, &mut client_write);
    let _ = client_write.shutdown(Shutdown::Write);
    let _ = upstream.join();
}
