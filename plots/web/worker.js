// worker.js — one run of the page, in a Web Worker: the page's entry point
// (common/web/web_page.c, compiled to WebAssembly as AttnlabCore) driven a chunk of
// training steps at a time, so that a "stop" message is read between two chunks.
//
// build-page.sh puts this file after the module's own JavaScript; the page starts it from
// a Blob URL (nothing is fetched). Messages in: {cmd: 'start', dir, model, preset, settings,
// data} (data: {path, text} of a data file, or null), {cmd: 'open', dir, bytes, settings, data}, {cmd:
// 'stop'}, {cmd: 'decode', input}. Messages out: {type: 'ready', models, figures}
// (page_figures: the figure scripts and their captions), {type: 'created', config},
// {type: 'progress', log} (train_log.tsv so far), {type: 'trained', state}, {type: 'files',
// files, compare} ({path: Uint8Array}: the run's files, and the comparison directory
// page_compare made of the run: what the figure scripts read), {type: 'decoded', text,
// files, compare} (the trace of the input, and the comparison made again with it),
// {type: 'error', where, message}.
/* global AttnlabCore */
'use strict';
(function () {
    let M = null, P = null, run = 0, dir = '', stopping = false, queue = [];
    // Steps a chunk trains before it pauses at the next validation: the page hears from
    // the run (and a stop takes effect) at every validation
    const CHUNK = 1;

    const post = (m, transfer) => self.postMessage(m, transfer || []);
    const fail = (where) => post({type: 'error', where, message: P.error()});

    function readTree(d, prefix, out) {
        for (const name of M.FS.readdir(d)) {
            if (name === '.' || name === '..')
                continue;
            const p = d + '/' + name;
            if (M.FS.isDir(M.FS.stat(p).mode))
                readTree(p, prefix + name + '/', out);
            else
                out[prefix + name] = M.FS.readFile(p);
        }
        return out;
    }

    function text(p) {
        return M.FS.readFile(p, {encoding: 'utf8'});
    }

    function writeData(data) {
        if (!data)
            return;
        const slash = data.path.lastIndexOf('/');
        if (slash > 0)
            M.FS.mkdirTree(data.path.slice(0, slash));
        M.FS.writeFile(data.path, data.text);
    }

    // The comparison directory of the run, made by the command line's own writers
    // (page_compare: curves.tsv, accuracy.tsv, positions.tsv, trace/MODEL/,
    // figure_vars.gp), outside the run's folder so that its download holds the run only;
    // null (the reason posted) when it could not be made, or for a run opened from a
    // checkpoint, which holds no training (no train_log.tsv, no build.tsv).
    function compare() {
        const out = '/compare' + dir;
        if (!M.FS.analyzePath(dir + '/build.tsv').exists)
            return null; // opened from a checkpoint: no training to compare
        if (P.compare(dir, out) !== 0) {
            post({type: 'error', where: 'compare', message: P.error()});
            return null;
        }
        return readTree(out, '', {});
    }

    // The files of the run, sent once training and evaluation are over.
    function sendFiles() {
        post({type: 'files', files: readTree(dir, '', {}), compare: compare()});
    }

    function evaluate() {
        post({type: 'evaluating'});
        // let the message go out before the evaluation holds the Worker
        setTimeout(() => {
            if (P.evaluate(run) !== 0)
                fail('evaluate');
            sendFiles();
        }, 0);
    }

    function finish(state) {
        if (P.finish(run) !== 0) {
            fail('finish');
            return;
        }
        post({type: 'trained', state, log: text(dir + '/train_log.tsv')});
        evaluate();
    }

    function step() {
        if (stopping) {
            finish('stopped');
            return;
        }
        const rc = P.train(run, CHUNK);
        post({type: 'progress', log: text(dir + '/train_log.tsv')});
        if (rc < 0) {
            fail('train');
            finish('failed');
        } else if (rc === 1) {
            finish('done');
        } else {
            setTimeout(step, 0); // read the messages (a stop) before the next chunk
        }
    }

    function handle(m) {
        if (m.cmd === 'stop') {
            stopping = true;
        } else if (m.cmd === 'start') {
            dir = m.dir;
            writeData(m.data);
            // the preset's sizes first: a setting given after them wins
            run = P.create(dir, `model=${m.model} ${P.preset(m.model, m.preset || '')} ` +
                           m.settings);
            if (!run) {
                fail('create');
                return;
            }
            P.config(run);
            post({type: 'created', config: P.text()});
            setTimeout(step, 0);
        } else if (m.cmd === 'open') {
            dir = m.dir;
            writeData(m.data);
            M.FS.mkdirTree('/upload');
            M.FS.writeFile('/upload/model.ckpt', m.bytes);
            run = P.open('/upload/model.ckpt', dir, m.settings);
            if (!run) {
                fail('open');
                return;
            }
            P.config(run);
            post({type: 'created', config: P.text()});
            evaluate();
        } else if (m.cmd === 'decode') {
            if (P.decode(run, m.input) !== 0) {
                post({type: 'error', where: 'decode', message: P.error()});
                return;
            }
            let files = {};
            try {
                files = readTree(dir + '/trace', '', {});
            } catch (e) {
                files = {}; // a model without a trace
            }
            post({type: 'decoded', text: P.text(), files, compare: compare()});
        }
    }

    self.onmessage = (e) => (P ? handle(e.data) : queue.push(e.data));

    AttnlabCore().then((mod) => {
        M = mod;
        const f = (name, ret, args) => M.cwrap(name, ret, args);
        P = {
            init: f('page_init', null, []),
            error: f('page_error', 'string', []),
            text: f('page_text', 'string', []),
            models: f('page_models', 'string', []),
            preset: f('page_preset', 'string', ['string', 'string']),
            create: f('page_create', 'number', ['string', 'string']),
            train: f('page_train', 'number', ['number', 'number']),
            finish: f('page_finish', 'number', ['number']),
            evaluate: f('page_evaluate', 'number', ['number']),
            open: f('page_open', 'number', ['string', 'string', 'string']),
            config: f('page_config', 'number', ['number']),
            decode: f('page_decode', 'number', ['number', 'string']),
            compare: f('page_compare', 'number', ['string', 'string']),
            figures: f('page_figures', 'string', []),
        };
        P.init();
        post({type: 'ready', models: P.models(), figures: P.figures()});
        for (const m of queue)
            handle(m);
        queue = [];
    }, (err) => post({type: 'error', where: 'load', message: String(err)}));
})();
