/* report_figures.c — the figure scripts a comparison draws, the figures each one
 * writes and the sentence shown under them, in English and Chinese (see report.h).
 *
 * Design. One table, read by the program (report_draw.c runs the scripts, report_page.c
 * shows the captions) and by the browser page (common/web, page_figures), so that a
 * caption is written once. It holds no code that runs a process: the web build compiles
 * it.
 */
#include "report.h"

const report_figure report_figures[REPORT_N_FIGURES] = {
    {"accuracy", {"accuracy"},
     "Token and whole-sequence accuracy against sequence length (mean over seeds, band: "
     "min-max). The shaded band is the training range; the dashed line is chance. Compare "
     "how each model's accuracy changes with the distance it must carry each symbol, "
     "inside the training range and beyond it. A model whose runs did not reach the "
     "target (the last column of the summary says so, and the budget figure marks the "
     "runs the cap stopped) is shown as it was when it stopped: its fall is that of a "
     "run cut short, not a limit of the model.",
     "逐词准确率和整序列准确率随序列长度的变化（各种子的平均值；色带：最小值到最大值）。"
     "灰色区域是训练长度范围；虚线是随机猜测的水平。比较每个模型的准确率如何随它需要"
     "携带每个符号的距离而变化，在训练范围之内和之外。如果一个模型的运行没有达到目标"
     "（摘要表的最后一列会写明，预算图也标出了被步数上限停止的运行），图中画的是它停止"
     "时的样子：它的下降属于一个被中途截断的运行，而不是这个模型的极限。"},
    {"positions", {"positions"},
     "Accuracy at each output position for a few lengths: where in the sequence each "
     "model fails, position by position along the output. The same caution as above: "
     "for a model whose runs did not reach the target, where it fails is where a run "
     "still learning fails.",
     "几个长度下每个输出位置的准确率：每个模型沿着输出在哪个位置出错。同样要注意：对于"
     "没有达到目标的模型，它出错的位置是一个仍在学习的运行出错的位置。"},
    {"distance", {"distance"},
     "Accuracy at each output position against its gap: the steps between reading the "
     "source symbol that position repeats and writing it (lengths inside the training "
     "range, colour: the length; mean over seeds). In copy every position of a length "
     "has the same gap, the length, so distance and the amount stored grow together; in "
     "reverse the gap runs from 1 to 2L-1 within one length, while the amount stored "
     "stays L. A model limited by distance falls along the gap alike at every length; one "
     "limited by what it must store falls with the length at an equal gap.",
     "每个输出位置的准确率对它的间隔作图：从读入这个位置要重复的源符号到写出它之间的步数"
     "（只画训练范围内的长度，颜色表示长度；各种子的平均值）。在复制任务中，同一长度的每个"
     "位置间隔都相同，等于长度，所以距离和要存储的量一起增长；在反转任务中，同一长度内间隔"
     "从 1 到 2L-1，而要存储的量始终是 L。受距离限制的模型在每个长度上都沿着间隔同样地"
     "下降；受存储量限制的模型在相同间隔上随长度下降。"},
    {"bleu", {"bleu"},
     "BLEU-4 of the test set against source length, in bins of 5 words (mean over seeds, "
     "band: min-max; the key gives each group's BLEU over every length), the training "
     "range shaded: the shape of Bahdanau et al. (2015), Fig. 2. Look for the model "
     "without attention falling as sentences grow longer and the one with attention "
     "holding up, inside the training range and past it. Drawn for a task read from a "
     "file (the toy translation, or your own pairs).",
     "测试集的 BLEU-4 随源句长度的变化，每 5 个词一组（各种子的平均值，色带：最小值到最大值；"
     "图例给出每组在所有长度上的 BLEU），灰色区域是训练长度范围：即 Bahdanau 等人（2015）"
     "图 2 的形状。看没有注意力的模型是否随句子变长而下降，而有注意力的模型是否保持住，在训练"
     "范围之内和之外。只对从文件读入的任务（玩具翻译，或你自己的句对）才画。"},
    {"sweep", {"sweep"},
     "The learning-rate sweep: for each model and rate, the steps to 0.99 validation token "
     "accuracy (left; median over seeds, bar: fastest to slowest; an open point: the median "
     "run never got there, so the point is its last validation and the budget is more) "
     "and the best validation token accuracy its runs reached (right). A model is fairly "
     "compared only at its own best rate. Drawn when a model was trained at several rates "
     "(compare --preset lrsweep).",
     "学习率扫描：每个模型在每个学习率下达到 0.99 验证逐词准确率所需的步数（左；各种子的中位数，"
     "误差线：最快到最慢；空心点表示中位数的运行从未达到，该点是它最后一次验证，所需预算更多），"
     "以及它的运行达到的最好验证逐词准确率（右）。只有在各自最好的学习率下比较模型才公平。只有"
     "当某个模型在几个学习率下训练过时才画（compare --preset lrsweep）。"},
    {"curves", {"curves"},
     "Training loss and teacher-forced token accuracy against step and against seconds "
     "(solid), with the loss and greedy token accuracy on the held-out validation set "
     "(dashed): how fast each model learns, per step and per unit of compute time. A "
     "validation loss rising while the training loss falls would be overfitting.",
     "训练损失和教师强制下的逐词准确率随训练步数和秒数的变化（实线），以及留出验证集上的"
     "损失和贪心解码的逐词准确率（虚线）：每个模型按步数和按计算时间学得多快。训练损失下降"
     "而验证损失上升，就是过拟合。"},
    {"budget", {"budget"},
     "Validation accuracy against training steps and seconds (log scales; median over "
     "seeds, band: min-max): the whole-sequence accuracy at the longest training length "
     "and the token accuracy inside the training range. The horizontal gap between two "
     "models is how many times more training one needs for the same accuracy; a run "
     "stopped early is carried at its last validation. A cross marks the last validation "
     "of runs the cap stopped before the target; the dots are the medians of "
     "budget_at.tsv (filled: reached at that step; open: not reached, more than that).",
     "验证准确率随训练步数和秒数的变化（对数坐标；各种子的中位数，色带：最小值到最大值）："
     "最长训练长度上的整序列准确率，以及训练范围内的逐词准确率。两个模型之间的水平距离，"
     "就是达到同样准确率时一个模型需要多几倍的训练；提前停止的运行按它最后一次验证的结果"
     "延续。叉号标出被步数上限停止、没有达到目标的运行的最后一次验证；圆点是 budget_at.tsv "
     "的中位数（实心：在该步达到；空心：没有达到，多于该步）。"},
    {"capacity", {"capacity"},
     "How far each setup copies against its size: the reach (the longest length up to "
     "which every length is copied at 99% token accuracy or more; median over seeds, bar: "
     "min-max) against the number of parameters, the setups of one model joined. Drawn "
     "when a model was trained at several sizes (compare --preset capacity).",
     "每个设置能复制多远与它的大小的关系：可达长度（到这个长度为止，每个长度的逐词准确率"
     "都不低于 99%；各种子的中位数，误差线：最小值到最大值）对参数数量作图，同一模型的不同"
     "设置连成一条线。只有当某个模型在几种大小下训练过时才画（compare --preset capacity）。"},
    {"attention",
     {"attention_rnn", "attention_enc_self", "attention_dec_self", "attention_cross"},
     "Attention weights for one example, one panel per matrix (per layer and head for a "
     "model that has several). Each panel has its own colour scale, from 0 to its largest "
     "weight (printed above it), so a head that spreads its attention almost evenly still "
     "shows its pattern; the tables under a figure give every weight.",
     "一个例子的注意力权重，每个矩阵一个面板（有多层多头的模型按层和头分别画出）。每个"
     "面板有自己的颜色刻度，从 0 到它的最大权重（写在面板上方），所以一个几乎平均分配注意力"
     "的头也能显出它的模式；图下的表格给出每个权重。"},
    {"gates", {"gates"},
     "Gate activations (input, forget, output) and the cell state over the steps of one "
     "example, for the 8 units with the longest memory (the highest mean forget gate, "
     "sorted). The bars under them rank every unit by its mean forget gate: few units "
     "keep their memory.",
     "一个例子中门激活（输入门、遗忘门、输出门）和细胞状态随步数的变化，只画记忆最长的 8 "
     "个单元（平均遗忘门最高，已排序）。下方的条形图把所有单元按平均遗忘门排序：能保持"
     "记忆的单元很少。"},
    {"cost", {"cost"},
     "Cost against length, log-log: the measured training time per sequence (one "
     "measurement per run and length, median over the runs) and the analytic FLOPs. The "
     "key gives the slope fitted to each model: near 1 the cost grows like L, near 2 like "
     "L squared (the grey guides show both). Attention adds a term in L squared, but at "
     "these lengths the per-token matrix products dominate, so read the measured slopes "
     "rather than assume L squared.",
     "代价随长度的变化（双对数坐标）：实测的每个序列的训练时间（每次运行在每个长度上测一次，"
     "取各次运行的中位数）和解析计算的浮点运算数。图例给出每个模型拟合出的斜率：接近 1 表示"
     "代价随 L 线性增长，接近 2 表示随 L 的平方增长（灰色参考线画出这两种斜率）。注意力多出"
     "一个 L 平方的项，但在这些长度上每个词的矩阵乘法占主导，所以要看实测的斜率，而不要"
     "假定是 L 的平方。"},
};
