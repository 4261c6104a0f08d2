"""twin.py — attnlab's three models written with PyTorch's own modules, tensor for tensor.

Each class computes what the C model of the same name computes, on the same weights:
read it beside lstm/lstm.h, rnn_attention/rnnattn.h and transformer/tfm.h. The
building blocks are the ones a PyTorch user knows (nn.Embedding, nn.LSTM, nn.GRU,
nn.GRUCell, nn.LSTMCell, nn.Linear, nn.Transformer); attnlab follows their conventions
(docs/conventions.md), so the weights map one to one, with the names of attnlab's
checkpoint (docs/checkpoint-format.md). attnlab_tensors() lists that map in arena order;
checkpoint.load_into() fills a twin from a model.ckpt through it.

Shapes (docs/conventions.md): B batch, Ts source length, Tt target length, V vocabulary
(the data symbols and BOS = V − 1), E embedding, H state width, A attention width,
D model width, NH heads, F feed-forward width, L layers, Lmax longest sequence.
Tokens are (B, T) long tensors. Every model has
    forward(src (B, Ts), dec_in (B, Tt)) -> logits (B, Tt, V)   teacher forcing
    greedy(src (B, Ts), Tt) -> (B, Tt) tokens                   Tt steps, own argmax fed back
and the loss is the mean cross-entropy over the B·Tt targets, as in every model's
forward in C.

Where PyTorch has two tensors for attnlab's one. An LSTM gate sees b_ih + b_hh only, so
attnlab keeps one bias b (lstm/lstm.h); the twin loads it into bias_ih and holds bias_hh
at zero, frozen. The gradient of the sum is then the gradient of bias_ih.
"""
import math

import torch
import torch.nn as nn


def _freeze_zero(p):
    """bias_hh of an LSTM: zero, and no gradient (its value lives in bias_ih)."""
    with torch.no_grad():
        p.zero_()
    p.requires_grad_(False)


# ---- lstm ---------------------------------------------------------------------------------

class Lstm(nn.Module):
    """The model `lstm` (lstm/lstm_model.c): embedding → LSTM encoder → its final (h, c)
    starts the LSTM decoder → linear layer over the V tokens. No attention: one (h, c) of
    width H is all the decoder knows of the source.

    nn.LSTM computes, per step, gate order i, f, g, o stacked along the 4H rows:
        i = σ(W_i x + U_i h + b_i)      f = σ(W_f x + U_f h + b_f)
        g = tanh(W_g x + U_g h + b_g)   o = σ(W_o x + U_o h + b_o)
        c' = f ⊙ c + i ⊙ g              h' = o ⊙ tanh(c')
    with W = weight_ih (4H, E) = attnlab's Wx, U = weight_hh (4H, H) = Wh.

    feed_context (Cho et al. 2014): the summary h_Ts is also an input of every decoder
    step. The decoder then reads x_t = [emb(y_{t−1}); h_Ts] (E+H), and its weight_ih
    (4H, E+H) is [dec.Wx | dec.Wc]: attnlab's two tensors are its two column blocks."""

    def __init__(self, V, E, H, feed_context=False):
        super().__init__()
        self.V, self.E, self.feed_context = V, E, feed_context
        self.enc_embed = nn.Embedding(V, E)           # enc.embed (V, E)
        self.enc = nn.LSTM(E, H, batch_first=True)    # enc.Wx, enc.Wh, enc.b
        self.dec_embed = nn.Embedding(V, E)           # dec.embed (V, E)
        # dec.Wx, dec.Wh, dec.b (feed_context: weight_ih = [dec.Wx | dec.Wc])
        self.dec = nn.LSTM(E + H if feed_context else E, H, batch_first=True)
        self.out = nn.Linear(H, V)                    # out.W (V, H), out.b (1, V)
        _freeze_zero(self.enc.bias_hh_l0)
        _freeze_zero(self.dec.bias_hh_l0)

    def attnlab_tensors(self):
        w_ih = self.dec.weight_ih_l0   # feed_context: two column blocks, views of it
        dec_wx = w_ih[:, :self.E] if self.feed_context else w_ih
        extra = [("dec.Wc", w_ih[:, self.E:])] if self.feed_context else []
        return [("enc.embed", self.enc_embed.weight), ("enc.Wx", self.enc.weight_ih_l0),
                ("enc.Wh", self.enc.weight_hh_l0), ("enc.b", self.enc.bias_ih_l0),
                ("dec.embed", self.dec_embed.weight), ("dec.Wx", dec_wx),
                ("dec.Wh", self.dec.weight_hh_l0), ("dec.b", self.dec.bias_ih_l0),
                ("out.W", self.out.weight), ("out.b", self.out.bias)] + extra

    def encode(self, src):
        """h_0 = c_0 = 0; the encoder reads the source; its last (h_Ts, c_Ts), each
        (1, B, H), is the decoder's initial state: the model's only bridge (with
        feed_context, h_Ts is also an input of every step: dec_input)."""
        _, state = self.enc(self.enc_embed(src))
        return state

    def dec_input(self, y, state0):
        """The decoder's input for tokens y (B, T): emb(y), and with feed_context
        [emb(y); h_Ts] at every step, h_Ts the h of the initial state state0."""
        x = self.dec_embed(y)                                        # (B, T, E)
        if not self.feed_context:
            return x
        summary = state0[0][0].unsqueeze(1).expand(-1, y.shape[1], -1)   # (B, T, H)
        return torch.cat([x, summary], -1)

    def forward(self, src, dec_in):
        # teacher forcing: the decoder reads (BOS, y_1 .. y_{Tt−1}), every step at once
        state0 = self.encode(src)
        s, _ = self.dec(self.dec_input(dec_in, state0), state0)     # (B, Tt, H)
        return self.out(s)                                          # logits = s·Wᵀ + b

    @torch.no_grad()
    def greedy(self, src, Tt):
        state0 = state = self.encode(src)
        y = torch.full((src.shape[0], 1), self.V - 1, dtype=torch.long)   # BOS
        outs = []
        for _ in range(Tt):
            s, state = self.dec(self.dec_input(y, state0), state)
            y = self.out(s).argmax(-1)                   # (B, 1): fed back as the next input
            outs.append(y)
        return torch.cat(outs, 1)


# ---- rnn_attention --------------------------------------------------------------------------

class RnnAttention(nn.Module):
    """The model `rnn_attention` (rnn_attention/rnnattn.h), Bahdanau, Cho & Bengio 2015:
    an encoder whose every state h_1..h_Ts is kept, and a decoder that looks back at all
    of them at every step through additive attention:
        q_t  = W_q s_{t−1}                  k_j = W_k h_j + b_k        (A each)
        e_tj = vᵀ tanh(q_t + k_j)           α_t = softmax_j(e_t)
        c_t  = Σ_j α_tj h_j                 (the context, width H)
        s_t  = cell([emb(y_{t−1}); c_t], s_{t−1}),      s_0 = h_Ts
        logits_t = W_o [s_t; c_t] + b_o
    cell "gru" (default): nn.GRU and nn.GRUCell, gate order r, z, n:
        r = σ(W_r x + b_ir + U_r h + b_hr)   z = σ(W_z x + b_iz + U_z h + b_hz)
        n = tanh(W_n x + b_in + r ⊙ (U_n h + b_hn))   h' = (1 − z) ⊙ n + z ⊙ h
    cell "lstm": nn.LSTM and nn.LSTMCell as in Lstm, s_0 = (h_Ts, c_Ts), the query is
    the h part; the only difference from `lstm` is then the attention.
    bidirectional (RNNsearch): the encoder is nn.GRU/nn.LSTM(bidirectional=True), whose
    output is the annotations h_j = [→h_j; ←h_j] (K = 2H wide; the _reverse weights are
    attnlab's bwd.*), and s_0 = tanh(W_s ←h_1) (init.W, no bias; for the LSTM the cell
    state starts at 0). Without it K = H."""

    def __init__(self, V, E, H, A, cell="gru", bidirectional=False):
        super().__init__()
        if cell not in ("gru", "lstm"):
            raise ValueError(f"cell '{cell}' is not accepted (accepted: gru, lstm)")
        self.V, self.cell, self.bidirectional = V, cell, bidirectional
        K = 2 * H if bidirectional else H                  # the width of an annotation
        rnn, step = (nn.GRU, nn.GRUCell) if cell == "gru" else (nn.LSTM, nn.LSTMCell)
        self.enc_embed = nn.Embedding(V, E)                # enc.embed (V, E)
        # enc.Wx (GH, E), enc.Wh (GH, H); bidirectional: bwd.* the _reverse ones
        self.enc = rnn(E, H, batch_first=True, bidirectional=bidirectional)
        self.dec_embed = nn.Embedding(V, E)                # dec.embed (V, E)
        self.dec = step(E + K, H)                          # dec.Wx (GH, E+K): [emb | ctx]
        self.attn_q = nn.Linear(H, A, bias=False)          # attn.Wq (A, H)
        self.attn_k = nn.Linear(K, A)                      # attn.Wk (A, K), attn.bk (1, A)
        self.attn_v = nn.Linear(A, 1, bias=False)          # attn.v (1, A)
        self.out = nn.Linear(H + K, V)                     # out.W (V, H+K), out.b (1, V)
        if bidirectional:
            self.init = nn.Linear(H, H, bias=False)        # init.W (H, H): W_s
        if cell == "lstm":
            _freeze_zero(self.enc.bias_hh_l0)
            _freeze_zero(self.dec.bias_hh)
            if bidirectional:
                _freeze_zero(self.enc.bias_hh_l0_reverse)

    def attnlab_tensors(self):
        e, d = self.enc, self.dec
        if self.cell == "gru":   # bx = b_i (bias_ih), bh = b_h (bias_hh), both kept
            enc_b = [("enc.bx", e.bias_ih_l0), ("enc.bh", e.bias_hh_l0)]
            dec_b = [("dec.bx", d.bias_ih), ("dec.bh", d.bias_hh)]
        else:                    # b = b_ih + b_hh, in bias_ih
            enc_b, dec_b = [("enc.b", e.bias_ih_l0)], [("dec.b", d.bias_ih)]
        back = []
        if self.bidirectional:   # last in attnlab's arena: bwd.*, then init.W
            back = [("bwd.Wx", e.weight_ih_l0_reverse), ("bwd.Wh", e.weight_hh_l0_reverse)]
            if self.cell == "gru":
                back += [("bwd.bx", e.bias_ih_l0_reverse), ("bwd.bh", e.bias_hh_l0_reverse)]
            else:
                back += [("bwd.b", e.bias_ih_l0_reverse)]
            back += [("init.W", self.init.weight)]
        return ([("enc.embed", self.enc_embed.weight), ("enc.Wx", e.weight_ih_l0),
                 ("enc.Wh", e.weight_hh_l0)] + enc_b +
                [("dec.embed", self.dec_embed.weight), ("dec.Wx", d.weight_ih),
                 ("dec.Wh", d.weight_hh)] + dec_b +
                [("attn.Wq", self.attn_q.weight), ("attn.Wk", self.attn_k.weight),
                 ("attn.bk", self.attn_k.bias), ("attn.v", self.attn_v.weight),
                 ("out.W", self.out.weight), ("out.b", self.out.bias)] + back)

    def encode(self, src):
        """Henc (B, Ts, H) = h_1..h_Ts, the keys' source and the values; K (B, Ts, A) the
        keys, once per sequence; the decoder's s_0 (the LSTM: (h, c), each (B, H))."""
        Henc, last = self.enc(self.enc_embed(src))
        if self.bidirectional:   # last h (2, B, H): [→h_Ts, ←h_1]; s_0 from ←h_1
            h0 = torch.tanh(self.init(last[0][1] if self.cell == "lstm" else last[1]))
            s0 = h0 if self.cell == "gru" else (h0, torch.zeros_like(h0))
        else:
            s0 = last[0] if self.cell == "gru" else (last[0][0], last[1][0])
        return Henc, self.attn_k(Henc), s0

    def attend(self, s_prev, Henc, K):
        """c_t (B, H) and α_t (B, Ts) for the query state s_prev (B, H)."""
        q = self.attn_q(s_prev)                                          # (B, A)
        e = self.attn_v(torch.tanh(q.unsqueeze(1) + K)).squeeze(-1)      # (B, Ts) scores
        alpha = torch.softmax(e, -1)
        return torch.bmm(alpha.unsqueeze(1), Henc).squeeze(1), alpha    # Σ_j α_tj h_j

    def step(self, emb, state, Henc, K):
        """One decoder step from emb(y_{t−1}) (B, E) and s_{t−1}: logits_t (B, V), s_t."""
        h_prev = state if self.cell == "gru" else state[0]
        c, _ = self.attend(h_prev, Henc, K)
        state = self.dec(torch.cat([emb, c], -1), state)
        s = state if self.cell == "gru" else state[0]
        return self.out(torch.cat([s, c], -1)), state

    def forward(self, src, dec_in):
        Henc, K, state = self.encode(src)
        E = self.dec_embed(dec_in)                                       # (B, Tt, E)
        logits = []
        for t in range(dec_in.shape[1]):  # step by step: the query of t is s_{t−1}
            z, state = self.step(E[:, t], state, Henc, K)
            logits.append(z)
        return torch.stack(logits, 1)

    @torch.no_grad()
    def greedy(self, src, Tt):
        Henc, K, state = self.encode(src)
        y = torch.full((src.shape[0],), self.V - 1, dtype=torch.long)    # BOS
        outs = []
        for _ in range(Tt):
            z, state = self.step(self.dec_embed(y), state, Henc, K)
            y = z.argmax(-1)
            outs.append(y)
        return torch.stack(outs, 1)


# ---- transformer ------------------------------------------------------------------------------

def sinusoid(Lmax, D, dtype=torch.float64):
    """PE (Lmax, D) of Vaswani et al. §3.5, built in dtype (float64 for the comparison):
    PE(t, 2i) = sin(t / 10000^(2i/D)), PE(t, 2i+1) = cos(t / 10000^(2i/D))."""
    t = torch.arange(Lmax, dtype=dtype).unsqueeze(1)                     # (Lmax, 1)
    d = torch.arange(D)
    freq = torch.exp(-math.log(10000.0) * (d - d % 2).to(dtype) / D)    # (D)
    angle = t * freq
    return torch.where(d % 2 == 0, torch.sin(angle), torch.cos(angle))


class Transformer(nn.Module):
    """The model `transformer` (transformer/tfm.h), Vaswani et al. 2017, on nn.Transformer:
        xs = s·E_src[x] + P[0..Ts)          mem = LN_enc(EncoderLayer_L(..(xs)))
        xt = s·E_tgt[y_in] + P[0..Tt)       z = LN_dec(DecoderLayer_L(..(xt), mem))
        logits = z·W_outᵀ + b_out
    s = emb_scale (1 by default, not √D: docs/transformer.md), P the positions: the
    sinusoids, a learned (Lmax, D) table shared by both stacks (`pos`), or none. Each
    sublayer f (attention, feed-forward) is a residual one, in one of two orders:
        pre-LN (default, norm_first=True):  y = x + f(LN(x))
        post-LN (post_ln, the paper's):     y = LN(x + f(x))
    The decoder's self-attention is causal: the additive mask is −∞ above the diagonal
    (nn.Transformer.generate_square_subsequent_mask), as attnlab's."""

    def __init__(self, V, D, NH, F, L, Lmax, pos="sinusoidal", post_ln=False, emb_scale=1.0):
        super().__init__()
        if pos not in ("sinusoidal", "learned", "none"):
            raise ValueError(f"pos '{pos}' is not accepted (accepted: sinusoidal, learned, "
                             f"none)")
        self.V, self.L, self.kind, self.scale = V, L, pos, emb_scale
        self.enc_emb = nn.Embedding(V, D)                  # enc_emb (V, D)
        self.dec_emb = nn.Embedding(V, D)                  # dec_emb (V, D)
        if pos == "learned":
            self.pos = nn.Parameter(torch.zeros(Lmax, D))  # pos (Lmax, D)
        elif pos == "sinusoidal":
            self.register_buffer("pe", sinusoid(Lmax, D), persistent=False)
        # dropout 0: attnlab has none; layer norm ε 1e-5 (TFM_LN_EPS); ReLU feed-forward
        self.tf = nn.Transformer(d_model=D, nhead=NH, num_encoder_layers=L,
                                 num_decoder_layers=L, dim_feedforward=F, dropout=0.0,
                                 activation="relu", layer_norm_eps=1e-5, batch_first=True,
                                 norm_first=not post_ln)
        self.out = nn.Linear(D, V)                         # out.w (V, D), out.b (1, V)

    def attnlab_tensors(self):
        """Arena order (transformer/tfm_model.c, visit_params): the embeddings, the positions when
        learned, the encoder layers, its final norm, the decoder layers, its final norm,
        the output. In a layer: ln1, attention, ln2, (cross-attention, ln3,) feed-forward;
        an attention's w_in (3D, D) = [W_q; W_k; W_v] is PyTorch's in_proj_weight."""
        def mha(prefix, a):
            return [(prefix + ".w_in", a.in_proj_weight), (prefix + ".b_in", a.in_proj_bias),
                    (prefix + ".w_out", a.out_proj.weight),
                    (prefix + ".b_out", a.out_proj.bias)]

        def norm(prefix, n):
            return [(prefix + ".g", n.weight), (prefix + ".b", n.bias)]

        def ff(prefix, layer):
            return [(prefix + ".w1", layer.linear1.weight), (prefix + ".b1", layer.linear1.bias),
                    (prefix + ".w2", layer.linear2.weight), (prefix + ".b2", layer.linear2.bias)]

        t = [("enc_emb", self.enc_emb.weight), ("dec_emb", self.dec_emb.weight)]
        if self.kind == "learned":
            t.append(("pos", self.pos))
        for l, layer in enumerate(self.tf.encoder.layers):
            p = f"enc.{l}"
            t += (norm(p + ".ln1", layer.norm1) + mha(p + ".attn", layer.self_attn) +
                  norm(p + ".ln2", layer.norm2) + ff(p + ".ff", layer))
        t += norm("enc_norm", self.tf.encoder.norm)
        for l, layer in enumerate(self.tf.decoder.layers):
            p = f"dec.{l}"
            t += (norm(p + ".ln1", layer.norm1) + mha(p + ".self", layer.self_attn) +
                  norm(p + ".ln2", layer.norm2) + mha(p + ".cross", layer.multihead_attn) +
                  norm(p + ".ln3", layer.norm3) + ff(p + ".ff", layer))
        t += norm("dec_norm", self.tf.decoder.norm)
        t += [("out.w", self.out.weight), ("out.b", self.out.bias)]
        return t

    def embed(self, table, tokens):
        """x (B, T, D) = s·E[tokens] + P[0..T): position t of every sequence gets row t."""
        x = table(tokens) * self.scale
        T = tokens.shape[1]
        if self.kind == "learned":
            x = x + self.pos[:T]
        elif self.kind == "sinusoidal":
            x = x + self.pe[:T].to(x.dtype)
        return x

    def encode(self, src):
        """The memory (B, Ts, D): the encoder stack and its final norm (tf.encoder.norm)."""
        return self.tf.encoder(self.embed(self.enc_emb, src))

    def decode(self, dec_in, mem):
        """logits (B, Tt, V): the decoder stack under the causal mask, its final norm, the
        output layer."""
        T = dec_in.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(T).to(mem.dtype)  # −∞ above
        return self.out(self.tf.decoder(self.embed(self.dec_emb, dec_in), mem, tgt_mask=mask))

    def forward(self, src, dec_in):
        return self.decode(dec_in, self.encode(src))

    @torch.no_grad()
    def greedy(self, src, Tt):
        """The encoder once; then at step t the decoder on the whole prefix (BOS, y_1 ..
        y_{t−1}), its last position's argmax appended. attnlab keeps a key/value cache
        instead (tfm_decode.c): the same numbers to rounding, so the same tokens."""
        mem = self.encode(src)
        y = torch.full((src.shape[0], 1), self.V - 1, dtype=torch.long)
        for _ in range(Tt):
            z = self.decode(y, mem)[:, -1]
            y = torch.cat([y, z.argmax(-1, keepdim=True)], 1)
        return y[:, 1:]


# ---- from a configuration ------------------------------------------------------------------------

def from_config(model, cfg, dtype=torch.float64):
    """The twin of attnlab model `model` built from cfg, the key -> value text of its
    config.tsv (or of a checkpoint's configuration), in dtype. Raises ValueError for a
    model or a setting it does not know."""
    n = lambda key: int(cfg[key])
    V = n("symbols") + 1   # the data symbols and BOS (config_vocab)
    if model == "lstm":
        twin = Lstm(V, n("embed"), n("hidden"), cfg.get("feed_context", "0") == "1")
    elif model == "rnn_attention":
        twin = RnnAttention(V, n("embed"), n("hidden"), n("attn"), cfg.get("cell", "gru"),
                            cfg.get("bidirectional", "0") == "1")
    elif model == "transformer":
        twin = Transformer(V, n("d_model"), n("heads"), n("d_ff"), n("layers"), n("max_len"),
                           cfg.get("pos", "sinusoidal"), cfg.get("post_ln", "0") == "1",
                           float(cfg.get("emb_scale", "1")))
    else:
        raise ValueError(f"model '{model}' is not accepted (accepted: lstm, rnn_attention, "
                         f"transformer)")
    return twin.to(dtype)
