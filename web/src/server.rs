//! The HTTP side: the page and its files (built into the binary), `/api/info`, the WebSocket
//! endpoint `/ws`, and the server's main loop.
//!
//! The main loop accepts TCP connections itself (rather than `axum::serve`) so that it can
//! bound them: in all and per address ([`crate::config::TCP_TOTAL_FACTOR`],
//! [`crate::config::TCP_PER_ADDRESS_FACTOR`]; past either a connection is closed at once), and
//! give every request [`ServeConfig::header_timeout`] to send its headers (a connection that
//! trickles them, or sends nothing, is closed). Every request must name an allowed host
//! ([`crate::hosts::HostPolicy`]), against DNS rebinding.

use crate::address::AddressKey;
use crate::ai::Roster;
use crate::config::{
    MAX_MESSAGE_BYTES, MAX_TRANSPORT_BYTES, ServeConfig, TCP_PER_ADDRESS_FACTOR, TCP_TOTAL_FACTOR,
};
use crate::hosts::HostPolicy;
use crate::hub::{Hub, Occupancy};
use anyhow::Context;
use axum::Router;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower::ServiceExt;

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const STYLE_CSS: &str = include_str!("../assets/style.css");
const FAVICON_SVG: &str = include_str!("../assets/favicon.svg");

/// The page may load only its own files and talk only to its own server.
const CSP: &str = "default-src 'self'; connect-src 'self'; img-src 'self' data:; \
style-src 'self'; script-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// A file of the page with its type and the security headers.
fn asset(body: &'static str, content_type: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// The routes.
pub fn router(hub: Arc<Hub>) -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { asset(INDEX_HTML, "text/html; charset=utf-8") }),
        )
        .route(
            "/app.js",
            get(|| async { asset(APP_JS, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/style.css",
            get(|| async { asset(STYLE_CSS, "text/css; charset=utf-8") }),
        )
        .route(
            "/favicon.svg",
            get(|| async { asset(FAVICON_SVG, "image/svg+xml") }),
        )
        .route("/api/info", get(info))
        .route("/ws", get(websocket))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found: the page is at /\n") })
        .with_state(hub)
}

/// The players offered and the limits, for the page. Specs are shown without the server's
/// paths ([`crate::ai::public_spec`]).
async fn info(State(hub): State<Arc<Hub>>) -> Response {
    let ais: Vec<_> = hub
        .roster
        .ais
        .iter()
        .enumerate()
        .map(|(i, a)| json!({ "index": i, "spec": a.public, "label": a.label }))
        .collect();
    let (rooms, games) = hub.counts();
    let pool = hub.pool.counts();
    let c = &hub.config;
    let body = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "ais": ais,
        "analysis": hub.roster.analysis.public,
        "endgame_tables": hub.roster.table_seeds().map(|n| json!({ "max_seeds": n })),
        "limits": {
            "max_message_bytes": MAX_MESSAGE_BYTES,
            "max_rooms": c.max_rooms,
            "max_games": c.max_games,
            "max_connections": c.max_connections,
            "max_connections_per_address": c.max_connections_per_address,
            "max_tables_per_address": c.max_tables_per_address,
            "idle_secs": c.idle.as_secs_f64(),
            "search_threads": c.ai_threads,
            "analysis_threads": c.analysis_threads(),
            "analysis_queue": c.analysis_queue(),
        },
        "open": { "rooms": rooms, "games": games, "connections": hub.connections(),
                  "searches": pool.moves + pool.analysis, "moves": pool.moves,
                  "analysis": pool.analysis, "running": pool.running },
    });
    (
        [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        axum::Json(body),
    )
        .into_response()
}

/// The WebSocket endpoint.
async fn websocket(
    State(hub): State<Arc<Hub>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    if !hub.hosts.origin_allowed(&headers) {
        return (StatusCode::FORBIDDEN, "cross-origin WebSocket refused\n").into_response();
    }
    let slot = match hub.connection_slot(AddressKey::of(peer.ip())) {
        Ok(slot) => slot,
        Err(why) => return (StatusCode::SERVICE_UNAVAILABLE, why).into_response(),
    };
    ws.max_message_size(MAX_TRANSPORT_BYTES)
        .max_frame_size(MAX_TRANSPORT_BYTES)
        .on_upgrade(move |socket| crate::socket::serve(socket, hub, peer.ip(), slot))
}

/// Ends on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        // Without a Ctrl-C handler the server still stops on SIGTERM or by being killed.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}

/// The answer to a request that names a host this server does not answer for.
fn unknown_host(host: Option<&str>) -> Response {
    let host = host.map_or_else(|| "(none)".to_string(), crate::protocol::clip);
    (
        StatusCode::MISDIRECTED_REQUEST,
        format!(
            "this server does not answer for the host '{host}' (a guard against DNS rebinding): \
             use localhost or an IP address, or start `oware serve` with --public-origin \
             https://{host}\n"
        ),
    )
        .into_response()
}

/// Serves one accepted TCP connection (HTTP/1.1, upgraded to a WebSocket on `/ws`).
async fn serve_connection(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    app: Router,
    hub: Arc<Hub>,
    header_timeout: Duration,
) {
    let service = hyper::service::service_fn(move |mut req: Request<hyper::body::Incoming>| {
        let app = app.clone();
        let hub = hub.clone();
        async move {
            let host = req
                .headers()
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .map(str::to_string);
            if !host.as_deref().is_some_and(|h| hub.hosts.host_allowed(h)) {
                return Ok(unknown_host(host.as_deref()));
            }
            req.extensions_mut().insert(ConnectInfo(peer));
            app.oneshot(req).await
        }
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .max_buf_size(64 * 1024);
    // A connection that breaks or times out ends here; there is nobody to tell.
    let _ = http
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades()
        .await;
}

/// Loads the players, binds, prints the address and serves until Ctrl-C or SIGTERM.
pub fn run(config: ServeConfig) -> anyhow::Result<()> {
    let roster = Roster::load(&config.ais, &config.analysis, config.egtb.as_deref())?;
    let hosts = HostPolicy::new(&config.public_origins)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(config.addr)
            .await
            .with_context(|| format!("cannot listen on {}", config.addr))?;
        let local = listener.local_addr().context("the bound address")?;
        println!("oware serve: listening on http://{local}/");
        for (i, a) in roster.ais.iter().enumerate() {
            println!("  AI {i}: {} ({})", a.label, a.spec);
        }
        if !local.ip().is_loopback() {
            println!("  note: reachable from other machines at this address (not only localhost)");
        }
        let idle = config.idle;
        let header_timeout = config.header_timeout;
        let tcp = Occupancy::new(
            config
                .max_connections
                .saturating_mul(TCP_TOTAL_FACTOR)
                .max(1),
            config
                .max_connections_per_address
                .saturating_mul(TCP_PER_ADDRESS_FACTOR)
                .max(1),
        );
        let hub = Arc::new(Hub::new(config, roster, hosts));
        let sweeper = hub.clone();
        tokio::spawn(async move {
            let every = (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
            let mut ticker = tokio::time::interval(every);
            loop {
                ticker.tick().await;
                sweeper.sweep(Instant::now());
            }
        });
        let app = router(hub.clone());
        let shutdown = shutdown_signal();
        tokio::pin!(shutdown);
        loop {
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        // Out of file descriptors, or a connection reset before it was
                        // accepted: wait a moment rather than spin.
                        eprintln!("oware serve: accepting a connection: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            // Past a limit the connection is closed at once: it costs nothing more.
            let Ok(place) = tcp.enter(AddressKey::of(peer.ip())) else {
                drop(stream);
                continue;
            };
            // Moves are small messages: send them at once.
            let _ = stream.set_nodelay(true);
            let (app, hub) = (app.clone(), hub.clone());
            tokio::spawn(async move {
                serve_connection(stream, peer, app, hub, header_timeout).await;
                drop(place);
            });
        }
        Ok(())
    })
}
