//! A real PostgreSQL server for the tests: the distribution's `initdb` and `pg_ctl`, a
//! cluster in a temporary directory (owned by the `postgres` user when the tests run as
//! root, which PostgreSQL refuses to run as), password authentication, listening on
//! 127.0.0.1 at a free port; stopped when dropped. Where PostgreSQL is not installed the
//! tests that need it say so in one line and pass without it, except in CI (`CI` set),
//! where `.ci/run` installs it and its absence is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The superuser's password in a test cluster.
pub const PASSWORD: &str = "context-engine-test";

/// A running test cluster.
#[derive(Debug)]
pub struct PgServer {
    bin: PathBuf,
    dir: PathBuf,
    pub port: u16,
    as_postgres: bool,
}

impl PgServer {
    /// Starts a cluster, or `None` (with a line saying how to install PostgreSQL) where
    /// it is not installed outside CI. Panics on a failure to start it: a test fault.
    pub fn start() -> Option<PgServer> {
        let Some(bin) = bin_dir() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "PostgreSQL is not installed, and CI must run the PostgreSQL tests (.ci/run installs it)"
            );
            eprintln!("PostgreSQL is not installed: skipping (apt-get install postgresql)");
            return None;
        };
        let as_postgres = is_root();
        let dir = std::env::temp_dir().join(format!(
            "context-engine-pg-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let pwfile = dir.join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap_or_else(|e| panic!("{e}"));
        if as_postgres {
            run(Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&dir));
        }
        let data = dir.join("data");
        let server = PgServer {
            bin,
            dir,
            port: free_port(),
            as_postgres,
        };
        server.run_tool(
            "initdb",
            &[
                "-D",
                path(&data),
                "-U",
                "postgres",
                "--auth=scram-sha-256",
                "--pwfile",
                path(&pwfile),
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
        );
        server.up();
        Some(server)
    }

    /// Turns TLS on and restarts: a certificate for 127.0.0.1 signed by an authority made
    /// here (by the `openssl` program the server's package brings); the authority's PEM.
    pub fn enable_tls(&self) -> String {
        let data = self.dir.join("data");
        let file = |name: &str| data.join(name);
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        run(Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-days",
                "2",
                "-subj",
                "/CN=context-engine test CA",
            ])
            .args(ec)
            .arg("-keyout")
            .arg(file("ca.key"))
            .arg("-out")
            .arg(file("ca.crt")));
        run(Command::new("openssl")
            .args(["req", "-subj", "/CN=127.0.0.1"])
            .args(ec)
            .arg("-keyout")
            .arg(file("server.key"))
            .arg("-out")
            .arg(file("server.csr")));
        std::fs::write(
            file("server.ext"),
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        run(Command::new("openssl")
            .args(["x509", "-req", "-days", "2", "-CAcreateserial", "-in"])
            .arg(file("server.csr"))
            .arg("-CA")
            .arg(file("ca.crt"))
            .arg("-CAkey")
            .arg(file("ca.key"))
            .arg("-extfile")
            .arg(file("server.ext"))
            .arg("-out")
            .arg(file("server.crt")));
        if self.as_postgres {
            run(Command::new("chown")
                .arg("postgres:postgres")
                .arg(file("server.crt"))
                .arg(file("server.key")));
        }
        run(Command::new("chmod").arg("600").arg(file("server.key")));
        let conf = file("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf).unwrap_or_else(|e| panic!("{e}"));
        text.push_str("\nssl = on\n");
        std::fs::write(&conf, text).unwrap_or_else(|e| panic!("{e}"));
        self.kill();
        self.up();
        std::fs::read_to_string(file("ca.crt")).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Starts the cluster (again) on its port, waiting until it accepts connections.
    pub fn up(&self) {
        let data = self.dir.join("data");
        let log = self.dir.join("log");
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60",
            self.port,
            path(&self.dir)
        );
        self.run_tool(
            "pg_ctl",
            &[
                "-D",
                path(&data),
                "-l",
                path(&log),
                "-o",
                &opts,
                "-w",
                "-t",
                "30",
                "start",
            ],
        );
    }

    /// Stops the cluster at once, as a crash would (`immediate`).
    pub fn kill(&self) {
        let data = self.dir.join("data");
        self.run_tool(
            "pg_ctl",
            &["-D", path(&data), "-m", "immediate", "-w", "stop"],
        );
    }

    /// The URL of `database` as the superuser.
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgres://postgres:{PASSWORD}@127.0.0.1:{}/{database}",
            self.port
        )
    }

    fn run_tool(&self, tool: &str, args: &[&str]) {
        let exe = self.bin.join(tool);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        cmd.args(args);
        run(&mut cmd);
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = self.stop_quietly(&data);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl PgServer {
    fn stop_quietly(&self, data: &Path) -> std::io::Result<std::process::Output> {
        let exe = self.bin.join("pg_ctl");
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        cmd.args(["-D", path(data), "-m", "immediate", "-w", "stop"])
            .output()
    }
}

static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn path(p: &Path) -> &str {
    p.to_str()
        .unwrap_or_else(|| panic!("a non-UTF-8 path: {}", p.display()))
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The directory of `initdb` and `pg_ctl`: on the PATH, or the newest of Debian's
/// `/usr/lib/postgresql/<version>/bin`.
fn bin_dir() -> Option<PathBuf> {
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if dir.join("initdb").exists() {
            return Some(dir);
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}
