// page.js — drives the page's entry point (common/web/web_page.c, built as
// build/web/attnlab_core.js) under node, the way the page's Worker does: a run made from
// settings, trained in chunks, finished and evaluated, its files copied out of the
// module's in-memory file system.
//
// usage: node tests/web/page.js CORE_JS train OUT_DIR [STEPS]
//          every model trained STEPS (60) steps, seed 1, lengths 3..9, validating every
//          10 steps and trained in chunks of 7 steps (so a chunk's end is never a log
//          line's); then the same on a data file (OUT_DIR/pairs.tsv, made here) with
//          lstm. Writes OUT_DIR/NAME/ (the run's files) and OUT_DIR/runs.tsv: NAME, then
//          the attnlab flags of the same run (its args.txt without --out).
//        node tests/web/page.js CORE_JS bench PRESET [STEPS]
//          training steps per second of each model at PRESET (small or defaults): STEPS
//          (20) steps in one chunk, the rate from train_log.tsv's seconds (training
//          time, validation left out)
// Exit status: 0, 1 when a run fails, 2 for bad usage.
'use strict';
const fs = require('fs');
const path = require('path');

function usage() {
    process.stderr.write('usage: node tests/web/page.js CORE_JS train OUT_DIR [STEPS] | ' +
        'bench PRESET [STEPS]\n');
    process.exit(2);
}

// The page's API over the module M (web_page.h), as worker.js wraps it.
function api(M) {
    const f = (name, ret, args) => M.cwrap(name, ret, args);
    return {
        init: f('page_init', null, []),
        error: f('page_error', 'string', []),
        text: f('page_text', 'string', []),
        preset: f('page_preset', 'string', ['string', 'string']),
        create: f('page_create', 'number', ['string', 'string']),
        train: f('page_train', 'number', ['number', 'number']),
        finish: f('page_finish', 'number', ['number']),
        evaluate: f('page_evaluate', 'number', ['number']),
        close: f('page_close', 'number', ['number']),
    };
}

// Copies directory dir of the module's file system to out on disk.
function copyOut(M, dir, out) {
    fs.mkdirSync(out, {recursive: true});
    for (const name of M.FS.readdir(dir)) {
        if (name === '.' || name === '..')
            continue;
        const p = dir + '/' + name;
        if (M.FS.isDir(M.FS.stat(p).mode))
            copyOut(M, p, path.join(out, name));
        else
            fs.writeFileSync(path.join(out, name), M.FS.readFile(p));
    }
}

// A data file of pairs: the source's words reversed, from a fixed little generator.
function pairsText() {
    const words = ['ant', 'bee', 'cat', 'dog', 'eel', 'fox', 'gnu'];
    let s = 12345, text = '# made by tests/web/page.js\n';
    const next = () => (s = (s * 1103515245 + 12345) % 2147483648);
    for (let k = 0; k < 400; k++) {
        const n = 2 + next() % 6, src = [];
        for (let i = 0; i < n; i++)
            src.push(words[next() % words.length]);
        text += src.join(' ') + '\t' + src.slice().reverse().join(' ') + '\n';
    }
    return text;
}

function fail(P, what) {
    process.stderr.write('page.js: ' + what + ': ' + P.error() + '\n');
    process.exit(1);
}

// Trains run h to its end in chunks of `chunk` steps; returns the chunks taken.
function trainAll(P, h, chunk, name) {
    let rc, chunks = 0;
    while ((rc = P.train(h, chunk)) === 0)
        chunks++;
    if (rc < 0)
        fail(P, name + ': training');
    return chunks + 1;
}

function train(M, P, out, steps) {
    fs.rmSync(out, {recursive: true, force: true});
    fs.mkdirSync(out, {recursive: true});
    // the data file at the same relative path in the module's file system and on disk,
    // so the task's name in config.tsv (and in the checkpoint) is the same for both
    const data = path.join(out, 'pairs.tsv');
    const text = pairsText();
    fs.writeFileSync(data, text);
    M.FS.mkdirTree(path.dirname(data));
    M.FS.writeFile(data, text);
    const runs = [];
    for (const model of ['lstm', 'rnn_attention', 'transformer'])
        runs.push([model + '-page', `model=${model} steps=${steps} seed=1 train_min=3 ` +
                   'train_max=9 log_every=10 eval_lengths=4 samples=1']);
    runs.push(['lstm-pairs', `model=lstm task=file:${data} steps=${steps} seed=1 ` +
               'log_every=10 hidden=32 embed=8']);
    const lines = [];
    for (const [name, settings] of runs) {
        const dir = '/runs/' + name;
        const h = P.create(dir, settings);
        if (!h)
            fail(P, name);
        const chunks = trainAll(P, h, 7, name);
        if (P.finish(h) !== 0 || P.evaluate(h) !== 0)
            fail(P, name + ': finishing');
        P.close(h);
        copyOut(M, dir, path.join(out, name));
        const args = M.FS.readFile(dir + '/args.txt', {encoding: 'utf8'}).split('\n');
        const flags = [];
        for (let i = 0; i < args.length; i++) {
            if (args[i] === '--out')
                i++;
            else if (args[i] !== '')
                flags.push(args[i]);
        }
        lines.push(name + '\t' + flags.join(' '));
        process.stdout.write(`trained ${name} in ${chunks} chunks (${flags.join(' ')})\n`);
    }
    fs.writeFileSync(path.join(out, 'runs.tsv'), lines.join('\n') + '\n');
}

function bench(M, P, preset, steps) {
    process.stdout.write('model\tpreset\tsteps\tsteps_per_s\n');
    for (const model of ['lstm', 'rnn_attention', 'transformer']) {
        const dir = '/bench/' + model;
        const h = P.create(dir, `model=${model} ${P.preset(model, preset)} steps=${steps} ` +
                           `log_every=${steps}`);
        if (!h)
            fail(P, model);
        trainAll(P, h, steps, model);
        const log = M.FS.readFile(dir + '/train_log.tsv', {encoding: 'utf8'}).trim().split('\n');
        const last = log[log.length - 1].split('\t');
        const rate = Number(last[0]) / Number(last[1]);
        process.stdout.write(`${model}\t${preset}\t${steps}\t${rate.toFixed(2)}\n`);
        P.close(h);
    }
}

const argv = process.argv.slice(2);
if (argv.length < 3)
    usage();
const steps = Number(argv[3] || (argv[1] === 'train' ? 60 : 20));
if (!Number.isInteger(steps) || steps < 1 || (argv[1] !== 'train' && argv[1] !== 'bench') ||
    (argv[1] === 'bench' && argv[2] !== 'small' && argv[2] !== 'defaults'))
    usage();
require(path.resolve(argv[0]))().then((M) => {
    const P = api(M);
    P.init();
    if (argv[1] === 'train')
        train(M, P, argv[2], steps);
    else
        bench(M, P, argv[2], steps);
});
