/* report_figures.c — the figure scripts a comparison draws, the figures each one
 * writes and the sentences shown under them, in English and Chinese (see report.h).
 *
 * Design. One table, read by the program (report_draw.c runs the scripts, report_page.c
 * shows the captions) and by the browser page (common/web, page_figures), so that a
 * caption is written once. A figure's caption holds for every task and any set of
 * models; what holds for one task only (a diagonal in copy) or for some models only (the
 * model without attention beside the one with it) is a note with the conditions it
 * needs, and report_caption adds the notes the report meets. So a report of one model on
 * a task read from a file never speaks of copy's diagonal or of a model it does not
 * show. The browser page shows the captions alone. It holds no code that runs a
 * process: the web build compiles it.
 *
 * Words. The Chinese follows docs/zh/glossary.md (tests/test_glossary.c reads every
 * Chinese string of the program): 符号 for a token, 随机水平 for chance, 子图 for a
 * panel, 图例 for a figure's legend, 浮点运算次数 for FLOPs.
 */
#include "report.h"

#include <string.h>

#include "../core/task.h"

/* The note that a figure of lengths shows lengths below the training range. */
#define SHORTER_NOTE                                                                       \
    {REPORT_SHORTER,                                                                       \
     "Lengths left of the grey band are shorter than any trained length, so they were "   \
     "never trained either: a dip there, like a fall beyond the band, shows a model that " \
     "does not carry what it learnt to an untrained length, not one that forgets.",       \
     "灰色区域左边的长度比任何训练长度都短，同样从未训练过：在那里的下降和灰色区域右边的"     \
     "下降一样，说明模型没有把学到的东西用到没训练过的长度上，而不是说明它记不住。"}

const report_figure report_figures[REPORT_N_FIGURES] = {
    {"accuracy", {"accuracy"},
     "Token and whole-sequence accuracy against sequence length (mean over seeds, band: "
     "min-max). The shaded band is the training range; the dashed line is chance. A model "
     "whose runs did not reach the target (the last column of the summary says so, and "
     "the budget figure marks the runs the cap stopped) is shown as it was when it "
     "stopped: its fall is that of a run cut short, not a limit of the model.",
     "逐词准确率和整序列准确率随序列长度的变化（各种子的平均值；色带：最小值到最大值）。"
     "灰色区域是训练范围，虚线是随机水平。如果某个模型的运行没有达到目标（摘要表的最后一列"
     "会写明，预算图也会标出被步数上限停下的运行），图中画的是它停下时的状态：它的下降是因为"
     "运行被中途截断，而不是这个模型能力的极限。",
     {{REPORT_COPY,
       "In copy the length is also the distance each symbol is carried, from reading it to "
       "writing it back: watch how accuracy changes with it, inside the training range and "
       "beyond it.",
       "在复制任务中，长度也就是每个符号从读入到写出所经过的距离：看准确率在训练范围之内和"
       "之外如何随它变化。"},
      {REPORT_REVERSE,
       "In reverse the last symbol read is the first written, so within one sequence the "
       "distances run from 1 to 2L-1 (the distance figure takes them apart): watch how "
       "accuracy changes with the length, inside the training range and beyond it.",
       "在反转任务中，最后读入的符号最先写出，所以同一个序列内的距离从 1 到 2L-1 不等（距离图"
       "把它们分开来画）：看准确率在训练范围之内和之外如何随长度变化。"},
      {REPORT_FILE,
       "For a task read from a file the length is that of the source sentence, and each "
       "point is every test example of that length: a length with few examples gives a "
       "noisy point.",
       "对于从文件读入的任务，长度是源句子的长度，每个点是测试集中这个长度的全部例子：例子少"
       "的长度，点的波动就大。"},
      SHORTER_NOTE}},
    {"positions", {"positions"},
     "Accuracy at each output position for a few lengths: where along the output the "
     "model fails, position by position. For a model whose runs did not reach the target, "
     "where it fails is where a run still learning fails.",
     "几个长度下每个输出位置的准确率：模型沿着输出序列在哪些位置出错。对于没有达到目标的"
     "模型，它出错的位置只是一个还在学习中的运行出错的位置。",
     {{REPORT_COPY,
       "In copy, output position i repeats the source symbol read L steps before it.",
       "在复制任务中，第 i 个输出位置重复的是 L 步之前读入的源符号。"},
      {REPORT_REVERSE,
       "In reverse, output position i repeats source position L+1-i: the first positions "
       "written are the last read.",
       "在反转任务中，第 i 个输出位置重复的是第 L+1-i 个源位置：最先写出的是最后读入的。"}}},
    {"distance", {"distance"},
     "Accuracy at each output position against its gap: the steps between reading the "
     "source symbol that position repeats and writing it (lengths inside the training "
     "range, colour: the length; mean over seeds). A model limited by distance falls "
     "along the gap alike at every length; one limited by what it must store falls with "
     "the length at an equal gap.",
     "每个输出位置的准确率随间隔的变化：间隔是从读入这个位置要重复的源符号到写出它所经过的"
     "步数（只画训练范围内的长度，颜色表示长度；各种子的平均值）。受距离限制的模型，在每个"
     "长度上都沿着间隔以同样的方式下降；受存储量限制的模型，在相同的间隔上随长度增加而下降。",
     {{REPORT_COPY,
       "In copy every position of a length has the same gap, the length, so distance and "
       "the amount stored grow together and cannot be told apart here; reverse takes them "
       "apart.",
       "在复制任务中，同一长度的每个位置间隔都相同，都等于长度，所以距离和要存储的量一起增长，"
       "在这里分不开；反转任务能把两者分开。"},
      {REPORT_REVERSE,
       "In reverse the gap runs from 1 to 2L-1 within one length while the amount stored "
       "stays L, so the two can be told apart.",
       "在反转任务中，同一长度内的间隔从 1 到 2L-1 不等，而要存储的量始终是 L，所以两者可以"
       "分开来看。"}}},
    {"bleu", {"bleu"},
     "BLEU-4 of the test set against source length, in bins of 5 words (mean over seeds, "
     "band: min-max; the legend gives each group's BLEU over every length), the training "
     "range shaded: the shape of Bahdanau et al. (2015), Fig. 2. Drawn for a task read "
     "from a file (the toy translation, or your own pairs). One setup trained on two "
     "ranges keeps its colour, solid for the longer range and dashed for the shorter; "
     "open points mark a group with runs the step cap stopped before their target "
     "(convergence.tsv says which): their scores are those of models cut short. "
     "bleu-table.tsv gives each group's BLEU over every test sentence.",
     "测试集的 BLEU-4 随源句子长度的变化，每 5 个词分为一组（各种子的平均值；色带：最小值到"
     "最大值；图例给出每组在所有长度上的 BLEU），灰色区域是训练范围：即 Bahdanau 等人（2015）"
     "图 2 的形状。只对从文件读入的任务（玩具翻译，或你自己的句对）才画。同一设置在两个训练"
     "范围上训练时颜色相同，较长的范围画实线，较短的画虚线；空心点标出有运行被步数上限停下、"
     "没有达到目标的组（convergence.tsv 写明是哪些）：它们的分数是运行被中途截断的模型的分数。"
     "bleu-table.tsv 给出每组在全部测试句子上的 BLEU。",
     {{REPORT_CONTRAST,
       "Look for the model without attention falling as sentences grow longer and the one "
       "with attention holding up, inside the training range and past it.",
       "看没有注意力的模型是否随句子变长而下降、有注意力的模型是否保持住，在训练范围之内和"
       "之外都要看。"},
      {REPORT_NO_CONTRAST,
       "Look for the length from which BLEU falls as sentences grow longer, inside the "
       "training range and past it.",
       "看句子从多长开始 BLEU 下降，在训练范围之内和之外都要看。"}}},
    {"sweep", {"sweep"},
     "The learning-rate sweep: for each model and rate, the steps to 0.99 validation token "
     "accuracy (left; median over seeds, bar: fastest to slowest; an open point: the median "
     "run never got there, so the point is its last validation and the budget is more) "
     "and the best validation token accuracy its runs reached (right). A model is fairly "
     "compared only at its own best rate. Drawn when a model was trained at several rates "
     "(compare --preset lrsweep).",
     "学习率扫描：每个模型在每个学习率下达到 0.99 验证逐词准确率所需的训练步数（左图；各种子"
     "的中位数，误差线：最快到最慢；空心点表示中位数那次运行始终没有达到，这个点是它最后一次"
     "验证，所需的训练还要更多），以及这些运行达到的最高验证逐词准确率（右图）。只有各自在"
     "最好的学习率下，模型之间的比较才公平。只有当某个模型在几个学习率下训练过时才画"
     "（compare --preset lrsweep）。",
     {{0, NULL, NULL}}},
    {"curves", {"curves"},
     "Training loss and teacher-forced token accuracy against step and against seconds "
     "(solid), with the loss and greedy token accuracy on the held-out validation set "
     "(dashed): how fast a model learns, per step and per unit of compute time. A "
     "validation loss rising while the training loss falls would be overfitting.",
     "训练损失和教师强制准确率随训练步数和秒数的变化（实线），以及留出的验证集上的损失和贪心"
     "解码的逐词准确率（虚线）：模型按训练步数、按计算时间各学得多快。训练损失下降而验证"
     "损失上升，就是过拟合。",
     {{REPORT_SEVERAL,
       "The top row compares the models step for step, the bottom row second for second.",
       "上面一排子图按训练步数比较各模型，下面一排按秒数比较。"}}},
    {"budget", {"budget"},
     "Validation accuracy against training steps and seconds (log scales; median over "
     "seeds, band: min-max): the whole-sequence accuracy at the longest training length "
     "and the token accuracy inside the training range. A run stopped early is carried at "
     "its last validation. A cross marks the last validation of runs the cap stopped "
     "before the target; the dots are the medians of budget_at.tsv (filled: reached at "
     "that step; open: not reached, more than that).",
     "验证准确率随训练步数和秒数的变化（对数坐标；各种子的中位数，色带：最小值到最大值）："
     "最长训练长度上的整序列准确率，以及训练范围内的逐词准确率。提前停止的运行按它最后一次"
     "验证的结果延续。叉号标出被步数上限停下、没有达到目标的运行的最后一次验证；圆点是 "
     "budget_at.tsv 的中位数（实心：在这一步达到；空心：没有达到，所需多于这一步）。",
     {{REPORT_SEVERAL,
       "The horizontal gap between two models is how many times more training one needs "
       "for the same accuracy.",
       "两条线之间的水平距离表示：要达到同样的准确率，一个模型需要的训练是另一个的多少倍。"}}},
    {"capacity", {"capacity"},
     "How far each setup gets against its size: the reach (the longest length up to which "
     "every length is done at 99% token accuracy or more; median over seeds, bar: "
     "min-max) against the number of parameters, the setups of one model joined. Drawn "
     "when a model was trained at several sizes (compare --preset capacity).",
     "每个设置能处理多长的序列与它的大小的关系：可达长度（到这个长度为止，每个长度的逐词"
     "准确率都不低于 99%；各种子的中位数，误差线：最小值到最大值）随参数数量的变化，同一模型"
     "的不同设置连成一条线。只有当某个模型在几种大小下训练过时才画（compare --preset "
     "capacity）。",
     {{0, NULL, NULL}}},
    {"attention",
     {"attention_rnn", "attention_enc_self", "attention_dec_self", "attention_cross"},
     "Attention weights for one example, one panel per matrix (per layer and head for a "
     "model that has several). Each panel has its own colour scale, from 0 to its largest "
     "weight (printed above it), so a head that spreads its attention almost evenly still "
     "shows its pattern; the tables under a figure give every weight.",
     "一个例子的注意力权重，每个矩阵一幅子图（有多层、多头的模型按层和头分开画）。每幅子图有"
     "自己的颜色刻度，从 0 到它的最大权重（写在子图上方），所以一个把注意力几乎平均分开的头"
     "也能显出它的模式；图下的表格列出每个权重。",
     {{REPORT_COPY,
       "In copy, output t repeats input t, so attention from the outputs to the source "
       "(additive, cross) that has learnt the task lies on the diagonal.",
       "在复制任务中，输出 t 重复输入 t，所以学会了任务的、从输出看向源序列的注意力（加性"
       "注意力、交叉注意力）落在对角线上。"},
      {REPORT_REVERSE,
       "In reverse, output t repeats input L+1-t, so attention from the outputs to the "
       "source (additive, cross) that has learnt the task lies on the anti-diagonal, from "
       "top right to bottom left.",
       "在反转任务中，输出 t 重复输入 L+1-t，所以学会了任务的、从输出看向源序列的注意力"
       "（加性注意力、交叉注意力）落在反对角线上，从右上到左下。"},
      {REPORT_FILE,
       "In a task read from a file an output word need not repeat one source word: look "
       "for the source words each output word draws on; a diagonal appears only where both "
       "sides keep the same order.",
       "在从文件读入的任务中，一个输出词不一定重复某一个源词：看每个输出词依靠的是哪些源词；"
       "只有两边顺序一致的地方才会出现对角线。"}}},
    {"gates", {"gates"},
     "Gate activations (input, forget, output) and the cell state over the steps of one "
     "example, for the 8 units with the longest memory (the highest mean forget gate, "
     "sorted). The bars under them rank every unit by its mean forget gate: how many units "
     "keep their memory.",
     "一个例子中各个门的取值（输入门、遗忘门、输出门）和细胞状态随步数的变化，只画记忆最长"
     "的 8 个单元（平均遗忘门最高，已排序）。下方的条形图把所有单元按平均遗忘门排序：看有"
     "多少单元能保持记忆。",
     {{0, NULL, NULL}}},
    {"cost", {"cost"},
     "Cost against length, log-log: the measured training time per sequence (one "
     "measurement per run and length, median over the runs) and the analytic FLOPs. The "
     "legend gives the slope fitted to each model: near 1 the cost grows like L, near 2 "
     "like L squared (the grey guides show both). Attention adds a term in L squared, but "
     "at these lengths the per-token matrix products dominate, so read the measured "
     "slopes rather than assume L squared.",
     "代价随长度的变化（双对数坐标）：实测的每个序列的训练时间（每次运行在每个长度上测一次，"
     "取各次运行的中位数）和解析计算的浮点运算次数。图例给出每个模型拟合出的斜率：接近 1 "
     "表示代价随 L 线性增长，接近 2 表示随 L 的平方增长（灰色参考线画出这两种斜率）。注意力"
     "多出一个与 L 的平方成正比的项，但在这些长度上，每个符号的矩阵乘法占主导，所以要看实测"
     "的斜率，不要先入为主地认定是 L 的平方。",
     {{0, NULL, NULL}}},
};

unsigned report_scene_of(const report_facts *fx)
{
    const char *t = fx->cfg->task;
    unsigned s = strcmp(t, "copy") == 0      ? REPORT_COPY
                 : strcmp(t, "reverse") == 0 ? REPORT_REVERSE
                 : task_is_file(t)           ? REPORT_FILE
                                             : REPORT_OTHER;
    int plain = 0, attends = 0;
    for (size_t m = 0; m < fx->n_models; m++) {
        const model_ops *ops = fx->ops ? fx->ops[m] : NULL;
        plain |= ops && !ops->attends;
        attends |= ops && ops->attends;
    }
    s |= fx->n_models > 1 ? REPORT_SEVERAL : REPORT_ONE;
    s |= plain && attends ? REPORT_CONTRAST : REPORT_NO_CONTRAST;
    if (fx->shortest > 0 && fx->shortest < fx->cfg->train_min)
        s |= REPORT_SHORTER;
    return s;
}

void report_caption(FILE *f, const report_figure *fig, unsigned scene, int zh)
{
    fputs(zh ? fig->caption_zh : fig->caption, f);
    const size_t max = sizeof fig->notes / sizeof fig->notes[0];
    for (const report_note *n = fig->notes; n < fig->notes + max && n->en; n++)
        if ((n->when & scene) == n->when)
            fprintf(f, "%s%s", zh ? "" : " ", zh ? n->zh : n->en);
}
