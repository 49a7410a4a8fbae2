//! One connection's session: it parses each message, acts on the table the connection sits
//! at, and answers. It knows nothing of sockets, so the message handling is tested directly.

use crate::address::AddressKey;
use crate::ai::{analyse, choose_job, south_value, turning_point};
use crate::config::{MESSAGE_BURST, MESSAGES_PER_SECOND};
use crate::hub::{Hub, SharedTable, lock};
use crate::pool::{Stop, Work, is_stopped};
use crate::protocol::{
    self, ErrorCode, ErrorReply, Outgoing, Reply, Request, SeatName, SideChoice, clip,
};
use crate::ratelimit::TokenBucket;
use crate::state::PositionView;
use crate::table::{Kind, Table, TableEvent};
use oware_engine::record::games_in;
use oware_engine::{Game, GameError, Move, Side};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, mpsc};

/// What the connection's writer sends.
#[derive(Clone, Debug)]
pub enum Outbound {
    /// A text message.
    Text(Arc<str>),
    /// A WebSocket ping.
    Ping,
    /// A close frame with a code and a reason; the writer stops after it.
    Close(u16, String),
}

/// The table a connection sits at.
struct Binding {
    id: String,
    table: SharedTable,
    /// The seat's secret; none for a watcher.
    token: Option<String>,
    /// Whether this connection made the table (a game of its own, replaced by its next one).
    own: bool,
    events: broadcast::Receiver<TableEvent>,
}

impl Drop for Binding {
    fn drop(&mut self) {
        let mut t = lock(&self.table);
        let seat = t.seat_of(self.token.as_deref());
        t.depart(seat);
        t.publish();
    }
}

/// A connection's state.
pub struct Session {
    hub: Arc<Hub>,
    key: AddressKey,
    out: mpsc::Sender<Outbound>,
    binding: Option<Binding>,
    bucket: TokenBucket,
    /// The review being analysed for this connection, if any: stopped when the connection
    /// goes.
    review: Arc<std::sync::Mutex<Option<Arc<Stop>>>>,
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(stop) = lock(&self.review).take() {
            stop.stop();
        }
    }
}

fn bad(message: impl Into<String>) -> ErrorReply {
    ErrorReply::new(ErrorCode::BadMessage, message)
}

/// The game of a record's text (the format `oware replay` reads; its first line with moves)
/// and every state of it, the start included; or the engine's error naming the bad ply.
pub fn replay_record(text: &str) -> Result<(Game, Vec<PositionView>), GameError> {
    let mut states = vec![PositionView::of(&Game::new())];
    let game = match games_in(text).first() {
        Some((_, line)) => line.replay(|game, _, _| states.push(PositionView::of(game)))?,
        None => Game::new(),
    };
    Ok((game, states))
}

impl Session {
    /// A session sending its asynchronous answers (hints, analyses) to `out`.
    pub fn new(hub: Arc<Hub>, ip: IpAddr, out: mpsc::Sender<Outbound>) -> Session {
        Session {
            hub,
            key: AddressKey::of(ip),
            out,
            binding: None,
            bucket: TokenBucket::new(MESSAGE_BURST, MESSAGES_PER_SECOND),
            review: Arc::new(std::sync::Mutex::new(None)),
        }
    }

    fn rate_limited() -> Outgoing {
        Outgoing::to(
            None,
            Reply::Error(ErrorReply::new(
                ErrorCode::RateLimited,
                format!("more than {MESSAGES_PER_SECOND} messages a second: slow down"),
            )),
        )
    }

    /// Answers one text message. The answers come back in order; state changes also reach
    /// everyone at the table through its events, this connection included.
    pub fn handle(&mut self, text: &str) -> Vec<Outgoing> {
        if !self.bucket.take(Instant::now()) {
            return vec![Self::rate_limited()];
        }
        match protocol::parse(text) {
            Err((id, e)) => vec![Outgoing::to(id, Reply::Error(e))],
            Ok((id, request)) => self
                .dispatch(id, request)
                .unwrap_or_else(|e| vec![Outgoing::to(id, Reply::Error(e))]),
        }
    }

    /// Answers a binary message: the protocol is JSON text only. It counts against the
    /// message rate like any other.
    pub fn handle_binary(&mut self) -> Outgoing {
        if !self.bucket.take(Instant::now()) {
            return Self::rate_limited();
        }
        Outgoing::to(
            None,
            Reply::Error(bad("binary messages are not read: send JSON text")),
        )
    }

    fn dispatch(&mut self, id: Option<u64>, request: Request) -> Result<Vec<Outgoing>, ErrorReply> {
        match request {
            Request::Ping => Ok(vec![Outgoing::to(id, Reply::Pong)]),
            Request::NewAi { ai, side } => {
                let Some(entry) = self.hub.roster.ais.get(ai) else {
                    return Err(bad(format!(
                        "no AI number {ai}: the server offers 0 to {}",
                        self.hub.roster.ais.len() - 1
                    )));
                };
                let human = resolve(side);
                let kind = Kind::Ai {
                    ai,
                    name: entry.public.clone(),
                    human,
                };
                self.create(id, kind, SeatName::from_side(human))
            }
            Request::NewLocal => self.create(id, Kind::Local, SeatName::Both),
            Request::CreateRoom { side } => {
                self.create(id, Kind::Room, SeatName::from_side(resolve(side)))
            }
            Request::JoinRoom { code } => {
                let (code, table, _) = self.hub.room(&code, self.key, true)?;
                let claimed = {
                    let mut t = lock(&table);
                    let claimed = t.claim_seat();
                    if claimed.is_some() {
                        // Taking a seat is an action; watching or resuming is not.
                        t.touch();
                    }
                    claimed
                };
                match claimed {
                    Some((token, _)) => Ok(self.bind(id, code, table, Some(token), false)),
                    None => Err(ErrorReply::new(
                        ErrorCode::RoomFull,
                        format!("both seats of room {code} are taken: you can watch"),
                    )),
                }
            }
            Request::Watch { code } => {
                let (code, table, _) = self.hub.room(&code, self.key, false)?;
                Ok(self.bind(id, code, table, None, false))
            }
            Request::Resume { token } => {
                let (table_id, table) = self.hub.by_token(&token, self.key)?;
                Ok(self.bind(id, table_id, table, Some(token), false))
            }
            Request::Leave => {
                self.binding = None;
                Ok(vec![Outgoing::to(
                    id,
                    Reply::Notice {
                        text: "you left the table".into(),
                    },
                )])
            }
            Request::Move { house } => {
                if house.chars().count() != 1 {
                    return Err(bad(format!(
                        "'{}' is not a house: one letter, a-f or A-F",
                        clip(&house)
                    )));
                }
                self.act(|t, seat| t.play(seat, &house))
            }
            Request::Undo => self.act(Table::undo),
            Request::Resign => self.act(Table::resign),
            Request::OfferDraw => self.act(Table::offer_draw),
            Request::AcceptDraw => self.act(Table::accept_draw),
            Request::Rematch => self.act(Table::rematch),
            Request::DeclineDraw => {
                let mut notice = String::new();
                self.act(|t, seat| {
                    notice = t.decline_draw(seat)?;
                    Ok(())
                })?;
                if let Some(b) = &self.binding {
                    let text = Outgoing::to(None, Reply::Notice { text: notice }).to_json();
                    lock(&b.table).send(TableEvent::Notice(text.into()));
                }
                Ok(Vec::new())
            }
            Request::Hint => self.hint(id),
            Request::Review { record } => self.review(id, &record),
        }
    }

    /// Makes a table and sits at it; a game of this connection's own that it replaces goes,
    /// once the new one is made (a refused one leaves it as it was).
    fn create(
        &mut self,
        id: Option<u64>,
        kind: Kind,
        seat: SeatName,
    ) -> Result<Vec<Outgoing>, ErrorReply> {
        let replaced = self
            .binding
            .as_ref()
            .filter(|b| b.own && lock(&b.table).kind != Kind::Room)
            .map(|b| b.id.clone());
        let created = self.hub.create(kind, seat, self.key, replaced.as_deref())?;
        let replies = self.bind(id, created.id, created.table, Some(created.token), true);
        self.schedule_ai();
        Ok(replies)
    }

    /// Sits at `table` with `token` (none: watching): `joined`, then the state.
    fn bind(
        &mut self,
        id: Option<u64>,
        table_id: String,
        table: SharedTable,
        token: Option<String>,
        own: bool,
    ) -> Vec<Outgoing> {
        self.binding = None;
        let mut t = lock(&table);
        let seat = t.seat_of(token.as_deref());
        // Arriving is not an action: a table kept open by `resume` alone still expires.
        t.arrive(seat);
        // Tell the others first, then listen: this connection gets its state directly.
        t.publish();
        let events = t.subscribe();
        let is_room = t.kind == Kind::Room;
        // Players get the join code to hand on; watchers the room code only.
        let code = match (is_room, seat) {
            (false, _) => None,
            (true, SeatName::Watcher) => Some(table_id.clone()),
            (true, _) => t.join_code(),
        };
        let joined = Reply::Joined {
            kind: t.kind.name(),
            link: code.as_ref().map(|c| format!("/?room={c}")),
            code,
            seat,
            token: token.clone(),
        };
        let state = Reply::State(Box::new(t.view()));
        drop(t);
        self.binding = Some(Binding {
            id: table_id,
            table,
            token,
            own,
            events,
        });
        vec![Outgoing::to(id, joined), Outgoing::to(id, state)]
    }

    /// Runs `f` on the table for this connection's seat; on success everyone gets the new
    /// state and the AI moves if it is its turn.
    fn act(
        &mut self,
        f: impl FnOnce(&mut Table, SeatName) -> Result<(), ErrorReply>,
    ) -> Result<Vec<Outgoing>, ErrorReply> {
        let b = self.binding.as_ref().ok_or_else(no_table)?;
        {
            let mut t = lock(&b.table);
            let seat = t.seat_of(b.token.as_deref());
            f(&mut t, seat)?;
            t.publish();
        }
        self.schedule_ai();
        Ok(Vec::new())
    }

    /// Starts the AI's search when it is the AI's turn at this connection's table.
    fn schedule_ai(&self) {
        let Some(b) = &self.binding else { return };
        let Some(job) = lock(&b.table).ai_job() else {
            return;
        };
        spawn_ai_move(self.hub.clone(), b.table.clone(), job);
    }

    /// The AI's suggestion for the side to move, sent when the search ends.
    fn hint(&mut self, id: Option<u64>) -> Result<Vec<Outgoing>, ErrorReply> {
        let b = self.binding.as_ref().ok_or_else(no_table)?;
        let (entry_index, game, stop, ticket) = {
            let mut t = lock(&b.table);
            if t.seat_of(b.token.as_deref()) == SeatName::Watcher {
                return Err(ErrorReply::new(
                    ErrorCode::NotYourSeat,
                    "watchers get no hints",
                ));
            }
            let index = match t.kind {
                Kind::Ai { ai, .. } => ai,
                Kind::Local => 0,
                Kind::Room => {
                    return Err(ErrorReply::new(
                        ErrorCode::NotAllowed,
                        "no hints in a room: the game is between the two of you",
                    ));
                }
            };
            if t.is_over() {
                return Err(ErrorReply::new(ErrorCode::GameOver, "the game is over"));
            }
            if t.ai_side() == Some(t.game().to_move()) {
                return Err(ErrorReply::new(
                    ErrorCode::NotYourTurn,
                    "the AI is to move: wait for its move",
                ));
            }
            let ticket = self.hub.pool.ticket(self.key, Work::Analysis)?;
            let Some(stop) = t.start_hint() else {
                return Err(ErrorReply::new(
                    ErrorCode::Busy,
                    "a hint is being searched already",
                ));
            };
            (index, t.game().clone(), stop, ticket)
        };
        let hub = self.hub.clone();
        let table = b.table.clone();
        let out = self.out.clone();
        let entry = &hub.roster.ais[entry_index];
        let job = choose_job(entry, game.clone(), stop.flag());
        let by = entry.public.clone();
        tokio::spawn(async move {
            let result = hub.pool.run(&ticket, &stop, Duration::MAX, job).await;
            drop(ticket);
            lock(&table).hint_ended(&stop);
            let reply = match result {
                // A hint for a position the table has left (an undo, a new game) is not sent.
                _ if stop.is_stopped() => return,
                Ok(c) => Reply::Hint {
                    ply: game.ply(),
                    mv: c.mv.letter(),
                    value: c.value,
                    south_value: c.value.map(|v| south_value(v, game.to_move())),
                    info: c.info,
                    by,
                },
                Err(e) => {
                    eprintln!("oware serve: a hint search failed: {e:#}");
                    Reply::Error(ErrorReply::new(
                        ErrorCode::AiFailed,
                        format!("the hint search failed: {e:#}"),
                    ))
                }
            };
            // The connection may be gone by now: then nobody waits for the hint.
            let _ = out.try_send(Outbound::Text(Outgoing::to(id, reply).to_json().into()));
        });
        Ok(Vec::new())
    }

    /// Every state of a record's game at once, then its evaluation when the analysis ends
    /// (one search per position, on the pool; stopped if the connection goes).
    fn review(&mut self, id: Option<u64>, record: &str) -> Result<Vec<Outgoing>, ErrorReply> {
        let (game, states) = replay_record(record)
            .map_err(|e| ErrorReply::new(ErrorCode::BadRecord, format!("not a legal game: {e}")))?;
        let moves: Vec<Move> = game.moves().to_vec();
        let mut replies = vec![Outgoing::to(
            id,
            Reply::Review {
                moves: moves.iter().map(|m| m.letter()).collect(),
                states,
                record: game.record(),
            },
        )];
        let stop = {
            let mut current = lock(&self.review);
            if current.is_some() {
                replies.push(Outgoing::to(
                    id,
                    Reply::Error(ErrorReply::new(
                        ErrorCode::Busy,
                        "an analysis of yours is running: the graph comes when it ends",
                    )),
                ));
                return Ok(replies);
            }
            let ticket = match self.hub.pool.ticket(self.key, Work::Analysis) {
                Ok(t) => t,
                Err(e) => {
                    replies.push(Outgoing::to(id, Reply::Error(e)));
                    return Ok(replies);
                }
            };
            let stop = Stop::new();
            *current = Some(stop.clone());
            (stop, ticket)
        };
        let (stop, ticket) = stop;
        let hub = self.hub.clone();
        let out = self.out.clone();
        let current = self.review.clone();
        let by = hub.roster.analysis.public.clone();
        let record = game.record();
        tokio::spawn(async move {
            let result = analyse(&hub.pool, &ticket, &stop, &hub.roster.analysis, moves).await;
            drop(ticket);
            {
                let mut c = lock(&current);
                if c.as_ref().is_some_and(|s| Arc::ptr_eq(s, &stop)) {
                    *c = None;
                }
            }
            let reply = match result {
                Ok((evals, table_marks)) => Reply::Analysis {
                    moves: record,
                    turning_point: turning_point(&evals),
                    evals,
                    by,
                    table_marks,
                },
                // The connection went: nobody waits for the graph.
                Err(e) if is_stopped(&e) => return,
                Err(e) => {
                    eprintln!("oware serve: an analysis failed: {e:#}");
                    Reply::Error(ErrorReply::new(
                        ErrorCode::AiFailed,
                        format!("the analysis failed: {e:#}"),
                    ))
                }
            };
            // As for hints: a connection that left wants no answer.
            let _ = out.try_send(Outbound::Text(Outgoing::to(id, reply).to_json().into()));
        });
        Ok(replies)
    }

    /// The state of the table this connection sits at, if any.
    pub fn table_view(&self) -> Option<crate::state::TableView> {
        self.binding.as_ref().map(|b| lock(&b.table).view())
    }

    /// Waits for the next event of this connection's table (forever when it has none).
    pub async fn next_event(&mut self) -> Result<TableEvent, broadcast::error::RecvError> {
        match &mut self.binding {
            Some(b) => b.events.recv().await,
            None => std::future::pending().await,
        }
    }

    /// What to send for a table event; leaves the table when it expired or closed.
    pub fn on_event(
        &mut self,
        event: Result<TableEvent, broadcast::error::RecvError>,
    ) -> Option<Arc<str>> {
        match event {
            Ok(TableEvent::State(s)) | Ok(TableEvent::Notice(s)) => Some(s),
            Ok(TableEvent::Expired(s)) => {
                self.binding = None;
                Some(s)
            }
            Err(broadcast::error::RecvError::Lagged(_)) => {
                // Missed states: the current one says everything.
                self.binding
                    .as_ref()
                    .map(|b| lock(&b.table).state_message())
            }
            Err(broadcast::error::RecvError::Closed) => {
                self.binding = None;
                None
            }
        }
    }
}

fn resolve(side: SideChoice) -> Side {
    match side {
        SideChoice::South => Side::South,
        SideChoice::North => Side::North,
        SideChoice::Random => {
            if rand::random::<bool>() {
                Side::South
            } else {
                Side::North
            }
        }
    }
}

fn no_table() -> ErrorReply {
    ErrorReply::new(
        ErrorCode::NoTable,
        "you are not at a table: start a game, create or join a room first",
    )
}

/// Searches the AI's move on the pool and plays it; everyone at the table sees it. A stale
/// search (the table moved on meanwhile) is stopped by the table and its result dropped; when
/// it ends, the search the table wants now (if any) starts in its place.
fn spawn_ai_move(hub: Arc<Hub>, table: SharedTable, job: crate::table::AiJob) {
    tokio::spawn(async move {
        let mut job = job;
        loop {
            let result = match hub.pool.ticket(job.owner, Work::Move) {
                Ok(ticket) => {
                    let entry = &hub.roster.ais[job.ai];
                    let search = choose_job(entry, job.game, job.stop.flag());
                    hub.pool
                        .run(&ticket, &job.stop, entry.expected(), search)
                        .await
                }
                Err(e) => Err(anyhow::anyhow!("{}", e.message)),
            };
            let mut t = lock(&table);
            t.search_ended();
            match result {
                Ok(choice) => match t.ai_moved(job.generation, choice.mv) {
                    Ok(true) => t.publish(),
                    Ok(false) => {}
                    Err(e) => {
                        t.ai_failed(job.generation);
                        notify_failure(&t, &e.message);
                    }
                },
                Err(_) if job.stop.is_stopped() => {}
                Err(e) => {
                    if t.ai_failed(job.generation) {
                        notify_failure(&t, &format!("{e:#}"));
                    }
                }
            }
            match t.ai_job() {
                Some(next) => job = next,
                None => return,
            }
        }
    });
}

/// Tells everyone at the table that its AI could not move, and logs it for the operator.
fn notify_failure(t: &Table, why: &str) {
    eprintln!("oware serve: the AI of game {} failed: {why}", t.id);
    let reply = Reply::Error(ErrorReply::new(
        ErrorCode::AiFailed,
        format!("the AI could not move ({why}): undo, or start a new game"),
    ));
    t.send(TableEvent::Notice(
        Outgoing::to(None, reply).to_json().into(),
    ));
    t.publish();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_read_as_oware_replay_reads_them() {
        let (game, states) = replay_record("c F a\t1-0 captured-25").expect("legal");
        assert_eq!((game.record().as_str(), states.len()), ("c F a", 4));
        assert_eq!(states[3], PositionView::of(&game));
        let (game, _) = replay_record("\n# comment\n d A # x\nb").expect("legal");
        assert_eq!(game.record(), "d A");
        let (game, states) = replay_record("").expect("the start");
        assert_eq!((game.ply(), states.len()), (0, 1));
        let e = replay_record("c c").expect_err("illegal");
        assert!(e.to_string().contains("ply 1"), "{e}");
    }
}
