// speed.js — a benchmark of the page, not a test: headless Chromium opens the page from
// file:// and trains one model at a time (one Worker, so one core) on copy at lengths
// 4 to 16, at a size preset, until its validation token accuracy reaches 0.999, its step
// cap, or a limit of wall-clock seconds (then the page's Stop ends it: censored). Prints
// one TSV line per model: how it ended, the last step, the validation token accuracy
// there, the training seconds train_log.tsv gives (validation left out) and the wall
// seconds from "Train" to the end of training (its final evaluation left out).
// docs/performance.md records what it measured.
//
// usage: node tests/web/speed.js PAGE_HTML PRESET LIMIT_S [CHROMIUM [MODELS [SEEDS]]]
//   PRESET small or defaults (the validation every 25 or 20 steps, so a stop takes
//   effect soon, at most 20000 steps); LIMIT_S the wall-clock seconds a run may take;
//   MODELS a comma-separated list (default: the three); SEEDS a comma-separated list
//   (default: 1), each model at every seed. Exit status 0, 1 on a failure, 2 for bad usage.
'use strict';
const {openPage, fillForm} = require('./helper.js');

async function main() {
    const [html, preset, limit, exe, models, seedList] = process.argv.slice(2);
    const seeds = (seedList || '1').split(',');
    if (!html || !['small', 'defaults'].includes(preset) || !(Number(limit) > 0) ||
        !seeds.every((s) => /^[1-9][0-9]{0,5}$/.test(s))) {
        process.stderr.write('usage: node tests/web/speed.js PAGE_HTML small|defaults LIMIT_S ' +
                             '[CHROMIUM [MODELS [SEEDS]]]\n');
        process.exit(2);
    }
    const list = [];
    for (const m of (models || 'lstm,rnn_attention,transformer').split(','))
        for (const seed of seeds)
            list.push({model: m, seed: Number(seed)});
    const {browser, page} = await openPage(html, exe);
    process.stdout.write('model\tseed\tpreset\tended\tstep\tval_token_acc\ttrain_seconds\twall_seconds\n');
    try {
        for (let k = 0; k < list.length; k++) {
            await fillForm(page, {models: [list[k].model], lengths: [4, 16], preset,
                                  seed: list[k].seed,
                                  logEvery: preset === 'small' ? 25 : 20, stopAcc: 0.999,
                                  steps: 20000});
            const t0 = Date.now();
            await page.click('#train');
            const card = page.locator('article.run').nth(k);
            // training is over once the page has heard 'trained' (the evaluation follows)
            const over = () => page.evaluate((i) => runs[i].ended !== undefined, k); // eslint-disable-line no-undef
            while (!(await over()) && Date.now() - t0 < Number(limit) * 1000)
                await page.waitForTimeout(250);
            if (!(await over())) {
                await card.locator('button', {hasText: 'Stop'}).click();
                while (!(await over()))
                    await page.waitForTimeout(250);
            }
            const wall = (Date.now() - t0) / 1000;
            const r = await page.evaluate((i) => { // eslint-disable-next-line no-undef
                const run = runs[i], last = run.log.rows[run.log.rows.length - 1];
                return {ended: run.ended, last, head: run.log.head};
            }, k);
            // the evaluation ends before the next model starts, so that it has the core
            while (!(await page.evaluate((i) => ['done', 'stopped', 'failed']
                .includes(runs[i].state), k))) // eslint-disable-line no-undef
                await page.waitForTimeout(250);
            const at = (h) => r.last[r.head.indexOf(h)];
            process.stdout.write(`${list[k].model}\t${list[k].seed}\t${preset}\t${r.ended}` +
                `\t${at('step')}\t${at('val_token_acc')}\t${at('seconds')}\t${wall.toFixed(1)}\n`);
        }
    } finally {
        await browser.close();
    }
}

main().catch((e) => {
    process.stderr.write('speed.js: ' + (e && e.stack || e) + '\n');
    process.exit(1);
});
