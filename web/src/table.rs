//! A table: one game and who sits at it (a person and the AI, two people on one device, or two
//! people in a friend room with watchers), with the actions a seat may take. Every move goes
//! through the engine; a table never changes except through these methods.

use crate::address::AddressKey;
use crate::pool::Stop;
use crate::protocol::{ErrorCode, ErrorReply, RefusalReason, SeatName};
use crate::state::{LastMoveView, PositionView, ResultView, SeatView, TableView, side_title};
use oware_engine::record::{format_line, moves_text};
use oware_engine::{EndReason, Game, GameResult, Move, PlayError, Side, Winner};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::broadcast;

/// Events a table sends to every connection at it.
#[derive(Clone, Debug)]
pub enum TableEvent {
    /// The new state (a `state` message, already encoded).
    State(Arc<str>),
    /// A one-line notice (a `notice` message, already encoded).
    Notice(Arc<str>),
    /// The table expired (an `error` message with code `expired`, already encoded); the
    /// connection leaves it.
    Expired(Arc<str>),
}

/// Who plays at a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A person against the AI with this index in the roster.
    Ai {
        /// The roster index of the AI.
        ai: usize,
        /// The AI's name (its spec).
        name: String,
        /// The person's side.
        human: Side,
    },
    /// Two people on one device.
    Local,
    /// A friend room.
    Room,
}

impl Kind {
    /// `ai`, `local` or `room`.
    pub const fn name(&self) -> &'static str {
        match self {
            Kind::Ai { .. } => "ai",
            Kind::Local => "local",
            Kind::Room => "room",
        }
    }
}

/// How a game ended other than by the rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Closed {
    /// This side resigned.
    Resigned(Side),
    /// Both agreed a draw.
    Agreed,
}

/// An AI move to search: the game as it is and the generation it belongs to.
#[derive(Debug)]
pub struct AiJob {
    /// The roster index of the AI.
    pub ai: usize,
    /// The game to move in.
    pub game: Game,
    /// The table's generation when the job was made; a result for another generation (after
    /// an undo, a resignation or a new game) is dropped.
    pub generation: u64,
    /// Set when the table moves on to another generation: the search ends early.
    pub stop: Arc<Stop>,
    /// The address the search time is counted for (the table's creator).
    pub owner: AddressKey,
}

/// One game and its seats.
#[derive(Debug)]
pub struct Table {
    /// The table's id (the room code for rooms).
    pub id: String,
    /// Who plays.
    pub kind: Kind,
    /// The address that made the table (its tables are counted against its limit).
    pub owner: AddressKey,
    /// For rooms, the secret letters after the room code in the join code.
    join_key: Option<String>,
    game: Game,
    last: Option<LastMoveView>,
    closed: Option<Closed>,
    draw_offer: Option<Side>,
    rematch_offer: Option<Side>,
    /// The table's search in the pool (waiting or running), live or stale: a table has at
    /// most one, so no client can pile searches up by undoing or resigning in a loop.
    search: Option<Arc<Stop>>,
    /// The generation whose AI search failed: the AI waits for an undo or a new game.
    ai_failed_at: Option<u64>,
    /// The hint search running for this table, if any (stopped with the generation).
    hint: Option<Arc<Stop>>,
    /// Removed from the hub (expired, evicted or replaced): nothing more is searched.
    closed_down: bool,
    generation: u64,
    /// The secret tokens, the seats they hold, and whether each was handed out.
    seats: Vec<(String, SeatName, bool)>,
    /// Connections at each side's seat (a `Both` seat counts for both).
    connected: [usize; 2],
    watchers: usize,
    last_active: Instant,
    /// When the last connection left (or the table was made).
    left_at: Instant,
    events: broadcast::Sender<TableEvent>,
}

/// Messages that may wait for a slow connection at a table before it must catch up.
const EVENT_BACKLOG: usize = 32;

fn refuse(code: ErrorCode, message: impl Into<String>) -> ErrorReply {
    ErrorReply::new(code, message)
}

/// The row's letters of `side`, for messages.
fn row_letters(side: Side) -> &'static str {
    match side {
        Side::South => "a–f",
        Side::North => "A–F",
    }
}

impl Table {
    /// A new table with the start position, its seats held by `seats`; the first token is
    /// its creator's, the others are handed out by [`Table::claim_seat`].
    pub fn new(
        id: String,
        kind: Kind,
        seats: Vec<(String, SeatName)>,
        owner: AddressKey,
        join_key: Option<String>,
    ) -> Table {
        let seats = seats
            .into_iter()
            .enumerate()
            .map(|(i, (token, seat))| (token, seat, i == 0))
            .collect();
        let (events, _) = broadcast::channel(EVENT_BACKLOG);
        let now = Instant::now();
        Table {
            id,
            kind,
            owner,
            join_key,
            game: Game::new(),
            last: None,
            closed: None,
            draw_offer: None,
            rematch_offer: None,
            search: None,
            ai_failed_at: None,
            hint: None,
            closed_down: false,
            generation: 0,
            seats,
            connected: [0, 0],
            watchers: 0,
            last_active: now,
            left_at: now,
            events,
        }
    }

    /// The join code of a room (`CODE-KEY`): what a friend needs to take the free seat.
    pub fn join_code(&self) -> Option<String> {
        self.join_key.as_ref().map(|k| format!("{}-{k}", self.id))
    }

    /// Whether `key` is this room's join key (compared in constant time).
    pub fn join_key_is(&self, key: &str) -> bool {
        let Some(mine) = &self.join_key else {
            return false;
        };
        mine.len() == key.len()
            && mine
                .bytes()
                .zip(key.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }

    /// How long nobody has been at the table; `None` while someone is.
    pub fn unattended_for(&self, now: Instant) -> Option<Duration> {
        (self.connected == [0, 0] && self.watchers == 0)
            .then(|| now.saturating_duration_since(self.left_at))
    }

    /// The table was taken out of the hub: its searches stop and no new one starts.
    pub fn close_down(&mut self) {
        self.closed_down = true;
        self.new_generation();
    }

    /// Moves to the next generation: the AI's search and the hint for the old one stop.
    fn new_generation(&mut self) {
        self.generation += 1;
        self.ai_failed_at = None;
        if let Some(s) = &self.search {
            s.stop();
        }
        if let Some(h) = self.hint.take() {
            h.stop();
        }
    }

    /// Whether the AI is to move and is (or will be) searching: an AI table, the game on, the
    /// AI's side to move, and its search for this generation did not fail.
    pub fn ai_to_move(&self) -> bool {
        match self.kind {
            Kind::Ai { human, .. } => {
                !self.is_over()
                    && self.game.to_move() != human
                    && self.ai_failed_at != Some(self.generation)
                    && !self.closed_down
            }
            _ => false,
        }
    }

    /// Starts a hint search unless one is running; its stop flag.
    pub fn start_hint(&mut self) -> Option<Arc<Stop>> {
        if self.hint.is_some() {
            return None;
        }
        let stop = Stop::new();
        self.hint = Some(stop.clone());
        Some(stop)
    }

    /// The hint search of `stop` ended (or never started).
    pub fn hint_ended(&mut self, stop: &Arc<Stop>) {
        if self.hint.as_ref().is_some_and(|h| Arc::ptr_eq(h, stop)) {
            self.hint = None;
        }
    }

    /// The game.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The tokens of the seats.
    pub fn tokens(&self) -> impl Iterator<Item = &str> {
        self.seats.iter().map(|(t, _, _)| t.as_str())
    }

    /// The seat `token` holds here; a connection without a token watches.
    pub fn seat_of(&self, token: Option<&str>) -> SeatName {
        token
            .and_then(|t| self.seats.iter().find(|(s, _, _)| s == t))
            .map_or(SeatName::Watcher, |(_, seat, _)| *seat)
    }

    /// Hands out the token of a seat nobody has taken yet.
    pub fn claim_seat(&mut self) -> Option<(String, SeatName)> {
        let (token, seat, claimed) = self.seats.iter_mut().find(|(_, _, c)| !*c)?;
        *claimed = true;
        Some((token.clone(), *seat))
    }

    /// A new receiver of this table's events.
    pub fn subscribe(&self) -> broadcast::Receiver<TableEvent> {
        self.events.subscribe()
    }

    /// When the table last saw an action.
    pub fn last_active(&self) -> Instant {
        self.last_active
    }

    /// Notes an action now.
    pub fn touch(&mut self) {
        self.last_active = Instant::now();
    }

    /// Whether the game is over (by the rules, a resignation or an agreed draw).
    pub fn is_over(&self) -> bool {
        self.game.is_over() || self.closed.is_some()
    }

    /// The AI's side, at a table with an AI.
    pub fn ai_side(&self) -> Option<Side> {
        match self.kind {
            Kind::Ai { human, .. } => Some(!human),
            _ => None,
        }
    }

    /// Counts a connection arriving at `seat`.
    pub fn arrive(&mut self, seat: SeatName) {
        self.presence(seat, 1);
    }

    /// Counts a connection leaving `seat`.
    pub fn depart(&mut self, seat: SeatName) {
        self.presence(seat, -1);
    }

    fn presence(&mut self, seat: SeatName, delta: isize) {
        let slots: &mut [usize] = match seat {
            SeatName::South => &mut self.connected[..1],
            SeatName::North => &mut self.connected[1..],
            SeatName::Both => &mut self.connected[..],
            SeatName::Watcher => std::slice::from_mut(&mut self.watchers),
        };
        for n in slots {
            *n = n.saturating_add_signed(delta);
        }
        if delta < 0 && self.connected == [0, 0] && self.watchers == 0 {
            self.left_at = Instant::now();
        }
    }

    /// The side a seat plays now: its own, or the side to move for two people on one device.
    fn side_of(&self, seat: SeatName) -> Result<Side, ErrorReply> {
        match seat {
            SeatName::South => Ok(Side::South),
            SeatName::North => Ok(Side::North),
            SeatName::Both => Ok(self.game.to_move()),
            SeatName::Watcher => Err(refuse(
                ErrorCode::NotYourSeat,
                "watchers cannot play: only the two players can",
            )),
        }
    }

    fn check_not_over(&self) -> Result<(), ErrorReply> {
        if self.is_over() {
            Err(refuse(
                ErrorCode::GameOver,
                "the game is over: start a new game or review this one",
            ))
        } else {
            Ok(())
        }
    }

    /// Plays the move `house` for `seat`, checked by the engine.
    pub fn play(&mut self, seat: SeatName, house: &str) -> Result<(), ErrorReply> {
        let mv: Move = house.parse().map_err(|e: oware_engine::ParseMoveError| {
            refuse(ErrorCode::BadMessage, e.to_string())
        })?;
        let side = self.side_of(seat)?;
        self.check_not_over()?;
        let to_move = self.game.to_move();
        if side != to_move {
            return Err(refuse(
                ErrorCode::NotYourTurn,
                format!("it is {}'s turn", side_title(to_move)),
            ));
        }
        if mv.owner() != side {
            return Err(ErrorReply::refused(
                RefusalReason::OtherRow,
                format!(
                    "house {mv} is on {}'s row: play one of yours ({})",
                    side_title(mv.owner()),
                    row_letters(side)
                ),
            ));
        }
        self.apply(mv)
    }

    /// Plays a checked move and records it as the last move.
    fn apply(&mut self, mv: Move) -> Result<(), ErrorReply> {
        let before = *self.game.position();
        match self.game.play(mv) {
            Ok(_) => {}
            Err(oware_engine::GameError::Illegal { source, .. }) => {
                return Err(match source {
                    PlayError::EmptyHouse(_) => ErrorReply::refused(
                        RefusalReason::EmptyHouse,
                        format!("house {mv} is empty"),
                    ),
                    PlayError::MustFeed(_) => ErrorReply::refused(
                        RefusalReason::MustFeed,
                        format!(
                            "{}'s row is empty: you must play a house that reaches it, and {mv} does not",
                            side_title(!before.to_move())
                        ),
                    ),
                    PlayError::NotYourHouse { .. } => {
                        ErrorReply::refused(RefusalReason::OtherRow, source.to_string())
                    }
                    PlayError::GameOver => refuse(ErrorCode::GameOver, "the game is over"),
                });
            }
            Err(e) => return Err(refuse(ErrorCode::BadMessage, e.to_string())),
        }
        self.last = LastMoveView::new(&before, mv);
        // A move answers the opponent's draw offer: it is declined.
        if self.draw_offer == Some(!before.to_move()) {
            self.draw_offer = None;
        }
        self.touch();
        Ok(())
    }

    /// The AI's move to search, if the AI is to move and the table has no search in the pool
    /// (a stale one that is still stopping holds the next back: when it ends, its task asks
    /// again). Marks the search as in the pool; [`Table::search_ended`] clears it.
    pub fn ai_job(&mut self) -> Option<AiJob> {
        let Kind::Ai { ai, .. } = self.kind else {
            return None;
        };
        if !self.ai_to_move() || self.search.is_some() {
            return None;
        }
        let stop = Stop::new();
        self.search = Some(stop.clone());
        Some(AiJob {
            ai,
            game: self.game.clone(),
            generation: self.generation,
            stop,
            owner: self.owner,
        })
    }

    /// The table's search left the pool (done, failed or stopped).
    pub fn search_ended(&mut self) {
        self.search = None;
    }

    /// Whether the table has a search in the pool.
    pub fn searching(&self) -> bool {
        self.search.is_some()
    }

    /// Plays the AI's answer to the job of `generation`; `false` when the job is stale.
    pub fn ai_moved(&mut self, generation: u64, mv: Move) -> Result<bool, ErrorReply> {
        if generation != self.generation || !self.ai_to_move() {
            return Ok(false);
        }
        self.apply(mv)?;
        Ok(true)
    }

    /// Notes that the AI's search of `generation` failed; `false` when the job is stale.
    pub fn ai_failed(&mut self, generation: u64) -> bool {
        if generation != self.generation {
            return false;
        }
        self.ai_failed_at = Some(generation);
        true
    }

    /// Whether `undo` would take something back.
    fn can_undo(&self) -> bool {
        if self.closed.is_some() {
            return false;
        }
        match self.kind {
            Kind::Ai { human, .. } => self.game.moves().iter().any(|m| m.owner() == human),
            Kind::Local => self.game.ply() > 0,
            Kind::Room => false,
        }
    }

    /// Takes back the last move (two people on one device), or the person's last move and
    /// the AI's reply (against the AI).
    pub fn undo(&mut self, seat: SeatName) -> Result<(), ErrorReply> {
        self.side_of(seat)?;
        if self.kind == Kind::Room {
            return Err(refuse(
                ErrorCode::NotAllowed,
                "moves cannot be taken back in a room",
            ));
        }
        if let Some(closed) = self.closed {
            let why = match closed {
                Closed::Resigned(_) => "after a resignation",
                Closed::Agreed => "after an agreed draw",
            };
            return Err(refuse(ErrorCode::NotAllowed, format!("no undo {why}")));
        }
        if !self.can_undo() {
            return Err(refuse(
                ErrorCode::NotAllowed,
                "there is no move of yours to take back",
            ));
        }
        match self.kind {
            Kind::Ai { human, .. } => {
                // Back to the person's turn before their last move (the AI's reply goes too).
                while let Some(mv) = self.game.undo() {
                    if mv.owner() == human {
                        break;
                    }
                }
            }
            _ => {
                self.game.undo();
            }
        }
        self.new_generation();
        self.draw_offer = None;
        self.last = self.recompute_last();
        self.touch();
        Ok(())
    }

    /// The view of the last move of the game, after the game was changed other than by a move.
    fn recompute_last(&self) -> Option<LastMoveView> {
        let mv = *self.game.moves().last()?;
        let mut before = self.game.clone();
        before.undo();
        LastMoveView::new(before.position(), mv)
    }

    /// `seat` gives up (on one device, the side to move gives up).
    pub fn resign(&mut self, seat: SeatName) -> Result<(), ErrorReply> {
        let side = match (&self.kind, seat) {
            (_, SeatName::Watcher) => self.side_of(seat)?,
            (Kind::Ai { human, .. }, _) => *human,
            _ => self.side_of(seat)?,
        };
        self.check_not_over()?;
        self.closed = Some(Closed::Resigned(side));
        self.end_offers();
        Ok(())
    }

    fn end_offers(&mut self) {
        self.new_generation();
        self.draw_offer = None;
        self.rematch_offer = None;
        self.touch();
    }

    /// `seat` offers a draw; if the opponent offered one already, the draw is agreed. On one
    /// device both people are there, so the offer is the agreement.
    pub fn offer_draw(&mut self, seat: SeatName) -> Result<(), ErrorReply> {
        let side = self.side_of(seat)?;
        self.check_not_over()?;
        match self.kind {
            Kind::Ai { .. } => Err(refuse(
                ErrorCode::NotAllowed,
                "the AI plays on: it does not take draw offers",
            )),
            Kind::Local => {
                self.closed = Some(Closed::Agreed);
                self.end_offers();
                Ok(())
            }
            Kind::Room => match self.draw_offer {
                Some(s) if s == side => Err(refuse(
                    ErrorCode::NotAllowed,
                    "you have offered a draw already: wait for the answer",
                )),
                Some(_) => {
                    self.closed = Some(Closed::Agreed);
                    self.end_offers();
                    Ok(())
                }
                None => {
                    self.draw_offer = Some(side);
                    self.touch();
                    Ok(())
                }
            },
        }
    }

    /// `seat` accepts the opponent's draw offer.
    pub fn accept_draw(&mut self, seat: SeatName) -> Result<(), ErrorReply> {
        let side = self.side_of(seat)?;
        self.check_not_over()?;
        if self.draw_offer != Some(!side) || seat == SeatName::Both {
            return Err(refuse(
                ErrorCode::NotAllowed,
                "there is no draw offer to accept",
            ));
        }
        self.closed = Some(Closed::Agreed);
        self.end_offers();
        Ok(())
    }

    /// `seat` declines the opponent's draw offer; the notice to send.
    pub fn decline_draw(&mut self, seat: SeatName) -> Result<String, ErrorReply> {
        let side = self.side_of(seat)?;
        if self.draw_offer != Some(!side) || seat == SeatName::Both {
            return Err(refuse(
                ErrorCode::NotAllowed,
                "there is no draw offer to decline",
            ));
        }
        self.draw_offer = None;
        self.touch();
        Ok(format!("{} declined the draw", side_title(side)))
    }

    /// A new game at this table once the game is over. In a room both players ask for it and
    /// the sides are swapped; elsewhere it starts at once with the same sides.
    pub fn rematch(&mut self, seat: SeatName) -> Result<(), ErrorReply> {
        let side = self.side_of(seat)?;
        if !self.is_over() {
            return Err(refuse(
                ErrorCode::NotAllowed,
                "the game is still on: finish it or resign first",
            ));
        }
        if self.kind == Kind::Room {
            if self.rematch_offer != Some(!side) {
                self.rematch_offer = Some(side);
                self.touch();
                return Ok(());
            }
            for (_, s, _) in &mut self.seats {
                *s = match *s {
                    SeatName::South => SeatName::North,
                    SeatName::North => SeatName::South,
                    other => other,
                };
            }
            self.connected.swap(0, 1);
        }
        self.game = Game::new();
        self.last = None;
        self.closed = None;
        self.end_offers();
        Ok(())
    }

    /// The result, counting resignations and agreed draws.
    fn result_view(&self) -> Option<(ResultView, [u8; 2], String)> {
        let captured = self.game.position().captured();
        match self.closed {
            Some(Closed::Resigned(loser)) => Some((
                ResultView {
                    winner: (!loser).name(),
                    reason: "resignation",
                },
                captured,
                format!(
                    "{} resigned: {} wins",
                    side_title(loser),
                    side_title(!loser)
                ),
            )),
            Some(Closed::Agreed) => Some((
                ResultView {
                    winner: "draw",
                    reason: "agreement",
                },
                captured,
                "Draw agreed".to_string(),
            )),
            None => self.game.result().map(|r| {
                (
                    ResultView {
                        winner: r.winner.name(),
                        reason: r.reason.name(),
                    },
                    r.score,
                    ending_text(&r),
                )
            }),
        }
    }

    /// The record in the format `oware replay` reads (the engine's one writer): the moves,
    /// then once over a tab, the result from South's side, the reason, the seeds and the
    /// players. A resignation or an agreed draw, which the rules do not know, is written in the
    /// same layout with `resignation` or `agreement` as its reason.
    pub fn record(&self) -> String {
        let [south, north] = self.seat_names();
        let players = Some((south.as_str(), north.as_str()));
        let Some(closed) = self.closed else {
            return format_line(self.game.moves(), self.game.result().as_ref(), players);
        };
        let (notation, reason) = match closed {
            Closed::Resigned(Side::South) => ("0-1", "resignation"),
            Closed::Resigned(Side::North) => ("1-0", "resignation"),
            Closed::Agreed => ("1/2-1/2", "agreement"),
        };
        let [s, n] = self.game.position().captured();
        format!(
            "{}\t{notation} {reason} {s}-{n} south={south} north={north}",
            moves_text(self.game.moves())
        )
    }

    /// The players' names for the record: the AI's spec, or `human`.
    fn seat_names(&self) -> [String; 2] {
        Side::BOTH.map(|side| match &self.kind {
            Kind::Ai { name, human, .. } if *human != side => name.replace(' ', "_"),
            _ => "human".to_string(),
        })
    }

    /// The whole state.
    pub fn view(&self) -> TableView {
        let mut position = PositionView::of(&self.game);
        let result = self.result_view();
        if self.closed.is_some() {
            position.legal.clear();
            position.terminal = true;
        }
        position.result = result.as_ref().map(|(r, _, _)| r.clone());
        let seats = Side::BOTH.map(|side| match &self.kind {
            Kind::Ai { name, human, .. } if *human != side => SeatView {
                player: "ai",
                name: name.clone(),
                connected: true,
            },
            _ => SeatView {
                player: "human",
                name: String::new(),
                connected: self.connected[side.index()] > 0,
            },
        });
        TableView {
            position,
            kind: self.kind.name(),
            code: (self.kind == Kind::Room).then(|| self.id.clone()),
            moves: self.game.moves().iter().map(|m| m.letter()).collect(),
            last: self.last.clone(),
            score: result.as_ref().map(|(_, s, _)| *s),
            ending: result.map(|(_, _, text)| text),
            seats,
            watchers: self.watchers,
            draw_offer: self.draw_offer.map(Side::name),
            rematch_offer: self.rematch_offer.map(Side::name),
            ai_thinking: self.ai_to_move(),
            can_undo: self.can_undo(),
            record: self.record(),
        }
    }

    /// The `state` message of the current state, encoded.
    pub fn state_message(&self) -> Arc<str> {
        let reply = crate::protocol::Reply::State(Box::new(self.view()));
        crate::protocol::Outgoing::to(None, reply).to_json().into()
    }

    /// Sends the current state to everyone at the table.
    pub fn publish(&self) {
        // No receiver means nobody is connected right now: nothing to tell, on purpose.
        let _ = self.events.send(TableEvent::State(self.state_message()));
    }

    /// Sends an event to everyone at the table.
    pub fn send(&self, event: TableEvent) {
        // As in `publish`: nobody connected is not an error.
        let _ = self.events.send(event);
    }
}

/// The result in words, e.g. "South wins 26–22: 25 seeds captured".
pub fn ending_text(r: &GameResult) -> String {
    let why = match r.reason {
        EndReason::Captured25 => "25 seeds captured",
        EndReason::NoMove => "no legal move left, each side takes its own seeds",
        EndReason::Repetition => "the position repeated, each side takes its own seeds",
        EndReason::MaxPlies => "the move limit was reached",
    };
    let [s, n] = r.score;
    match r.winner {
        Winner::Draw => format!("Draw {s}–{n}: {why}"),
        Winner::Side(side) => format!("{} wins {s}–{n}: {why}", side_title(side)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn room() -> Table {
        Table::new(
            "ROOM42".into(),
            Kind::Room,
            vec![("s".into(), SeatName::South), ("n".into(), SeatName::North)],
            AddressKey::V4([127, 0, 0, 1]),
            Some("KEYKEYKE".into()),
        )
    }

    fn ai_table(human: Side) -> Table {
        Table::new(
            "g".into(),
            Kind::Ai {
                ai: 0,
                name: "alphabeta:depth=2".into(),
                human,
            },
            vec![("t".into(), SeatName::from_side(human))],
            AddressKey::V4([127, 0, 0, 1]),
            None,
        )
    }

    #[test]
    fn refusals_name_their_reason() {
        let mut t = room();
        let e = t.play(SeatName::North, "A").expect_err("not North's turn");
        assert_eq!(e.code, ErrorCode::NotYourTurn);
        let e = t.play(SeatName::South, "A").expect_err("other row");
        assert_eq!(e.reason, Some(RefusalReason::OtherRow));
        let e = t.play(SeatName::Watcher, "a").expect_err("watcher");
        assert_eq!(e.code, ErrorCode::NotYourSeat);
        let e = t.play(SeatName::South, "z").expect_err("not a house");
        assert_eq!(e.code, ErrorCode::BadMessage);
        t.play(SeatName::South, "a").expect("legal");
        t.play(SeatName::North, "A").expect("legal");
        let e = t.play(SeatName::South, "a").expect_err("empty");
        assert_eq!(e.reason, Some(RefusalReason::EmptyHouse));
        assert_eq!(t.view().moves, vec!['a', 'A']);
    }

    #[test]
    fn must_feed_is_explained() {
        // North's row empty; South's 'a' holds one seed and cannot reach it, 'f' can.
        let board = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0];
        let pos = oware_engine::Position::from_parts(board, [23, 23], Side::South).expect("48");
        let mut t = Table::new(
            "x".into(),
            Kind::Local,
            vec![("t".into(), SeatName::Both)],
            AddressKey::V4([127, 0, 0, 1]),
            None,
        );
        t.game = Game::from_position(pos, oware_engine::DEFAULT_MAX_PLIES);
        let e = t.play(SeatName::Both, "a").expect_err("must feed");
        assert_eq!(e.reason, Some(RefusalReason::MustFeed));
        t.play(SeatName::Both, "f").expect("feeds");
    }

    #[test]
    fn draw_offers_resignations_and_rematches() {
        let mut t = room();
        t.offer_draw(SeatName::South).expect("offer");
        assert_eq!(t.view().draw_offer, Some("south"));
        assert_eq!(
            t.accept_draw(SeatName::South).expect_err("own offer").code,
            ErrorCode::NotAllowed
        );
        t.decline_draw(SeatName::North).expect("decline");
        t.offer_draw(SeatName::South).expect("offer again");
        t.play(SeatName::South, "c").expect("the offerer may move");
        assert_eq!(t.view().draw_offer, Some("south"));
        t.play(SeatName::North, "F").expect("moving declines");
        assert_eq!(t.view().draw_offer, None);
        t.offer_draw(SeatName::North).expect("offer");
        t.accept_draw(SeatName::South).expect("accept");
        let v = t.view();
        assert!(v.position.terminal);
        assert_eq!(
            v.position.result.as_ref().map(|r| r.reason),
            Some("agreement")
        );
        assert!(
            v.record.starts_with("c F\t1/2-1/2 agreement 0-0"),
            "{}",
            v.record
        );
        assert_eq!(
            t.play(SeatName::South, "a").expect_err("over").code,
            ErrorCode::GameOver
        );
        t.rematch(SeatName::South).expect("ask");
        assert_eq!(t.view().rematch_offer, Some("south"));
        t.rematch(SeatName::North).expect("agree");
        assert_eq!(t.seat_of(Some("s")), SeatName::North, "sides swap");
        assert_eq!(t.view().moves, Vec::<char>::new());
        t.resign(SeatName::South).expect("resign");
        let v = t.view();
        assert_eq!(v.position.result.as_ref().map(|r| r.winner), Some("north"));
        assert_eq!(v.ending.as_deref(), Some("South resigned: North wins"));
    }

    #[test]
    fn undo_against_the_ai_takes_back_the_reply_too() {
        let mut t = ai_table(Side::South);
        assert!(t.ai_job().is_none(), "the person opens");
        t.play(SeatName::South, "c").expect("legal");
        let job = t.ai_job().expect("AI to move");
        assert!(t.ai_job().is_none(), "one search at a time");
        assert!(t.view().ai_thinking);
        assert_eq!(
            t.play(SeatName::South, "a").expect_err("thinking").code,
            ErrorCode::NotYourTurn
        );
        t.search_ended();
        assert!(
            t.ai_moved(job.generation, "F".parse().expect("move"))
                .expect("legal")
        );
        t.play(SeatName::South, "a").expect("legal");
        let job = t.ai_job().expect("AI to move");
        t.undo(SeatName::South).expect("undo while thinking");
        assert!(job.stop.is_stopped(), "the stale search is stopped");
        t.search_ended();
        assert!(
            !t.ai_moved(job.generation, "A".parse().expect("move"))
                .expect("stale")
        );
        assert_eq!(t.view().moves, vec!['c', 'F']);
        t.undo(SeatName::South).expect("undo the pair");
        assert_eq!(t.view().moves, Vec::<char>::new());
        assert!(!t.view().can_undo);

        let mut t = ai_table(Side::North);
        let job = t.ai_job().expect("the AI opens as South");
        t.search_ended();
        t.ai_moved(job.generation, "d".parse().expect("move"))
            .expect("legal");
        assert_eq!(
            t.undo(SeatName::North).expect_err("nothing").code,
            ErrorCode::NotAllowed
        );
    }

    #[test]
    fn a_table_never_has_two_searches_in_the_pool() {
        // Move and undo in a loop: each undo stops the search, and the next one waits until
        // the stopped one has left the pool.
        let mut t = ai_table(Side::South);
        t.play(SeatName::South, "c").expect("legal");
        let first = t.ai_job().expect("AI to move");
        for _ in 0..10 {
            t.undo(SeatName::South).expect("undo while thinking");
            t.play(SeatName::South, "c").expect("legal again");
            assert!(
                t.ai_job().is_none(),
                "the stale search still holds the place"
            );
            assert!(t.view().ai_thinking, "the page shows the AI thinking");
        }
        assert!(first.stop.is_stopped());
        t.search_ended();
        let next = t
            .ai_job()
            .expect("the next search starts once the stale one left");
        assert!(!next.stop.is_stopped());
        assert_eq!(next.generation, first.generation + 10);

        // Resign and rematch as North in a loop: the same.
        let mut t = ai_table(Side::North);
        let first = t.ai_job().expect("the AI opens");
        for _ in 0..10 {
            t.resign(SeatName::North).expect("resign");
            t.rematch(SeatName::North).expect("a new game");
            assert!(t.ai_job().is_none());
        }
        assert!(first.stop.is_stopped());
        t.search_ended();
        assert!(t.ai_job().is_some());

        // A failed search waits for an undo; a table closed down searches no more.
        let mut t = ai_table(Side::North);
        let job = t.ai_job().expect("the AI opens");
        t.search_ended();
        assert!(t.ai_failed(job.generation));
        assert!(!t.view().ai_thinking && t.ai_job().is_none());
        t.resign(SeatName::North).expect("resign");
        t.rematch(SeatName::North).expect("new game");
        let job = t.ai_job().expect("a new game, a new search");
        t.close_down();
        assert!(job.stop.is_stopped());
        t.search_ended();
        assert!(t.ai_job().is_none());
    }

    #[test]
    fn join_keys_and_presence() {
        let mut t = room();
        assert_eq!(t.join_code().as_deref(), Some("ROOM42-KEYKEYKE"));
        assert!(t.join_key_is("KEYKEYKE"));
        assert!(!t.join_key_is("KEYKEYKX") && !t.join_key_is("KEY"));
        let now = Instant::now();
        assert!(t.unattended_for(now).is_some(), "nobody there yet");
        t.arrive(SeatName::South);
        assert!(t.unattended_for(now).is_none());
        t.depart(SeatName::South);
        assert!(t.unattended_for(Instant::now()).is_some());
    }
}
