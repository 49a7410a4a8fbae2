# Generates engine/tests/data/openspiel_games.jsonl from OpenSpiel's oware (pip install open_spiel==2.0.2),
# an independent implementation of the rules. Run from this folder.
import json, random, pyspiel
random.seed(12345)
game = pyspiel.load_game('oware')
out = open('openspiel_games.jsonl', 'w')
for n in range(150):
    s = game.new_initial_state()
    moves, states = [], []
    def snap(s):
        t = s.observation_tensor(0)
        return [round(x * 48) for x in t]
    states.append(snap(s))
    while not s.is_terminal():
        a = random.choice(s.legal_actions())
        p = s.current_player()
        moves.append(chr((ord('a') if p == 0 else ord('A')) + a))
        s.apply_action(a)
        states.append(snap(s))
    out.write(json.dumps({"moves": " ".join(moves), "states": states, "returns": s.returns()}) + "\n")
