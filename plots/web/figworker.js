// figworker.js — the page's figures, in a Web Worker: gnuplot compiled to WebAssembly
// (AttnGnuplot) runs one of the project's figure scripts, plots/NAME.gp, on the files of
// a comparison directory, through renderFigure (figures.js), and the SVGs go back.
//
// build-page.sh puts this file after gnuplot.js and figures.js; the page starts it from
// a Blob URL (nothing is fetched) and sends one message per script, answered in turn:
// in {id, script, scriptName, files} (files: {path: Uint8Array}, the comparison
// directory page_compare wrote); out {id, svgs, status, stderr, ms} ({FIGURE: text}; ms:
// the milliseconds gnuplot took, a fresh instance included), or {id, error}.
/* global AttnGnuplot, AttnFigures */
'use strict';
(function () {
    let queue = Promise.resolve();
    self.onmessage = (e) => {
        const m = e.data;
        // one script at a time: each gets a fresh instance of the module (figures.js)
        queue = queue.then(async () => {
            const t0 = performance.now();
            try {
                const r = await AttnFigures.renderFigure(AttnGnuplot, {
                    script: m.script, scriptName: m.scriptName, files: m.files,
                    formats: 'svg'});
                self.postMessage({id: m.id, svgs: r.svgs, status: r.status, stderr: r.stderr,
                                  ms: performance.now() - t0});
            } catch (err) {
                self.postMessage({id: m.id, error: String(err && err.message || err)});
            }
        });
    };
})();
