/* figures.js — runs one figure script (plots/NAME.gp) with gnuplot compiled to WebAssembly
 * (build/web/gnuplot.js), the way the command line runs it, and returns the SVGs it drew.
 *
 * Design. The native program (common/cli/report_draw.c) runs, in a comparison directory,
 *     gnuplot -e "dir='.'; figs='FIGS'; formats='png svg'" /abs/path/plots/NAME.gp
 * where the scripts load figure_vars.gp (and trace/MODEL/trace_vars.gp) written by the
 * program, read the tables as data, start no shell and write FIGS/FIGURE.FORMAT. Here the
 * same: the files of the comparison directory are written into the module's own file
 * system under /work, the script as /plots/NAME.gp, the working directory is /work, and
 * gnuplot runs with -e "dir='.'; figs='figures'; formats='svg'" (the page draws SVG: the
 * build has no png terminal). Every SVG left in /work/figures is returned.
 *
 * One module instance per figure, so that every script starts from the state a fresh
 * process starts from natively, whatever a script before it left in the module's memory
 * or file system; instantiating the compiled module takes tens of milliseconds, little
 * next to drawing (docs/web.md has the times).
 *
 * Plain ES2017, no dependency: it works as a classic script in a Web Worker
 * (importScripts("figures.js") defines self.AttnFigures) and under node
 * (require("./figures.js")).
 *
 * API:
 *   renderFigure(AttnGnuplot, options) -> Promise<{svgs, stdout, stderr, status}>
 *     AttnGnuplot  the module factory of gnuplot.js
 *     options.script      the script's text (what plots/NAME.gp holds)
 *     options.scriptName  its name, "accuracy" or "accuracy.gp" (messages name it)
 *     options.files       {path: Uint8Array | string}: the comparison directory's files,
 *                         paths relative to it ("figure_vars.gp", "accuracy.tsv",
 *                         "trace/lstm/trace_vars.gp", ...)
 *     options.formats     what the scripts draw: "svg" (the default)
 *   resolves with
 *     svgs    {FIGURE: text}: each figures/FIGURE.svg written ("accuracy", "attention_rnn")
 *     stdout  what gnuplot printed on standard output (the scripts' messages)
 *     stderr  what it printed on standard error (gnuplot's warnings and errors)
 *     status  gnuplot's exit status (0: the script ran to its end)
 */
(function (root) {
    "use strict";

    /* Makes every folder of path (absolute) in the module's file system. */
    function mkdirs(FS, path) {
        var at = "";
        path.split("/").forEach(function (part) {
            if (!part) return;
            at += "/" + part;
            try {
                FS.mkdir(at);
            } catch (e) {
                /* it exists already */
            }
        });
    }

    /* Does path stay inside the folder it is written to (no "..", not absolute)? */
    function relativeInside(path) {
        return path.length > 0 && path[0] !== "/" &&
            path.split("/").every(function (p) { return p !== ".." && p !== ""; });
    }

    function renderFigure(AttnGnuplot, options) {
        var opts = options || {};
        var name = String(opts.scriptName || "figure").replace(/\.gp$/, "");
        var formats = opts.formats || "svg";
        if (!/^[a-z0-9_]+$/i.test(name))
            return Promise.reject(new Error("scriptName: letters, digits and _ only: " + name));
        if (!/^[a-z ]+$/.test(formats))
            return Promise.reject(new Error("formats: words of letters only: " + formats));
        var out = [], err = [];
        return AttnGnuplot({
            print: function (s) { out.push(s); },
            printErr: function (s) { err.push(s); },
            noInitialRun: true
        }).then(function (mod) {
            var FS = mod.FS;
            mkdirs(FS, "/plots");
            mkdirs(FS, "/work/figures");
            FS.writeFile("/plots/" + name + ".gp", opts.script);
            var files = opts.files || {};
            Object.keys(files).forEach(function (path) {
                if (!relativeInside(path))
                    throw new Error("files: a path inside the directory is expected: " + path);
                var dir = path.lastIndexOf("/") > 0 ? path.slice(0, path.lastIndexOf("/")) : "";
                if (dir) mkdirs(FS, "/work/" + dir);
                FS.writeFile("/work/" + path, files[path]);
            });
            FS.chdir("/work");
            var status;
            var exitCode = typeof process !== "undefined" ? process.exitCode : undefined;
            try {
                status = mod.callMain(["-e", "dir='.'; figs='figures'; formats='" + formats + "'",
                                       "/plots/" + name + ".gp"]);
            } finally {
                /* under node, emscripten records gnuplot's exit status as node's own */
                if (typeof process !== "undefined") process.exitCode = exitCode;
            }
            var svgs = {};
            FS.readdir("/work/figures").forEach(function (f) {
                if (/\.svg$/.test(f))
                    svgs[f.slice(0, -4)] = FS.readFile("/work/figures/" + f, {encoding: "utf8"});
            });
            return {svgs: svgs, stdout: out.join("\n"), stderr: err.join("\n"),
                    status: status | 0};
        });
    }

    var api = {renderFigure: renderFigure};
    if (typeof module !== "undefined" && module.exports) module.exports = api;
    else root.AttnFigures = api;
})(typeof self !== "undefined" ? self : this);
