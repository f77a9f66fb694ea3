/**
 * The SVG pieces the day report's charts are made of: the figure with its
 * caption and its table in a disclosure, horizontal bars beside a label
 * column with their values as text, an axis, column histograms and the hatch
 * that tells a planned bar from an actual one without colour. Colours come
 * from the caller (the Okabe–Ito palette, palette.ts); no piece says
 * anything by colour alone.
 */
import type { ComponentChildren } from "preact";

/** One bar's height, the space between bars, and the widths of the label column, the plot and the value column. */
export const BAR_H = 22;
export const GAP = 8;
export const LABEL_W = 150;
export const PLOT_W = 300;
export const VALUE_W = 70;
export const CHART_W = LABEL_W + PLOT_W + VALUE_W;

/** Text that fits a label column (the full text in the table and the tooltip). */
export const clip = (s: string, n = 20) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** A chart, its caption, and its figures as a table (sortable) in a disclosure. */
export function Chart({ id, title, children, table }: { id: string; title: string; children: ComponentChildren; table: ComponentChildren }) {
  return (
    <figure class="report-chart" aria-labelledby={`${id}-title`} data-testid={id}>
      <figcaption id={`${id}-title`}>{title}</figcaption>
      {children}
      <details>
        <summary>Table: {title.toLowerCase()}</summary>
        {table}
      </details>
    </figure>
  );
}

/** The drawing of the chart `id` (named by its caption), `height` high and as wide as the charts are. */
export function ChartSvg({ id, height, children }: { id: string; height: number; children: ComponentChildren }) {
  return (
    <svg role="img" aria-labelledby={`${id}-title`} viewBox={`0 0 ${CHART_W} ${height}`} width="100%" class="report-svg">
      {children}
    </svg>
  );
}

/** A row's name in the label column, right-aligned against the plot, centred on `y`. */
export function RowLabel({ y, children }: { y: number; children: string }) {
  return (
    <text x={LABEL_W - 6} y={y} text-anchor="end" dominant-baseline="middle" class="chart-label">
      {clip(children)}
    </text>
  );
}

/** A bar from the plot's left edge; its value is text beside it (`BarValue`). */
export function Bar({ y, width, fill, stroke, track }: { y: number; width: number; fill?: string; stroke?: string; track?: boolean }) {
  return <rect x={LABEL_W} y={y} width={width} height={BAR_H} fill={fill} stroke={stroke} class={track ? "chart-track" : undefined} />;
}

/** A bar's value as text, at `x`, centred on `y`. */
export function BarValue({ x, y, children }: { x: number; y: number; children: string }) {
  return (
    <text x={x} y={y} dominant-baseline="middle" class="chart-value">
      {children}
    </text>
  );
}

/** A hatch of `colour` on white, for a bar (`fill="url(#<id>)"`) that must differ from a solid one by more than colour. */
export function Hatch({ id, colour }: { id: string; colour: string }) {
  return (
    <defs>
      <pattern id={id} width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
        <rect width="6" height="6" fill="#fff" />
        <rect width="3" height="6" fill={colour} />
      </pattern>
    </defs>
  );
}

/** Round axis steps up to `max`: 1, 2 or 5 times a power of ten, four or five ticks. */
export function niceTicks(max: number): number[] {
  const raw = max / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw)!;
  return Array.from({ length: Math.ceil(max / step) + 1 }, (_, i) => i * step);
}

/** The plot's horizontal axis at `y` with a grid line and a label per tick; `scale`: px per unit (else the last tick fills `width`). */
export function Axis({ x0, width, y, ticks, label, scale }: { x0: number; width: number; y: number; ticks: number[]; label: (v: number) => string; scale?: number }) {
  const at = (v: number) => x0 + v * (scale ?? width / ticks[ticks.length - 1]);
  return (
    <g class="chart-axis-group" aria-hidden="true">
      <line x1={x0} x2={x0 + width} y1={y} y2={y} class="chart-axis" />
      {ticks.map((v) => (
        <g key={v}>
          <line x1={at(v)} x2={at(v)} y1={0} y2={y} class="chart-grid" />
          <text x={at(v)} y={y + 14} text-anchor="middle" class="chart-tick">
            {label(v)}
          </text>
        </g>
      ))}
    </g>
  );
}

/** Columns over a baseline, one per bucket, each with its count above it and its label below; `fill` colours a bucket. */
export function Histogram({ id, buckets, fill, unit }: { id: string; buckets: { label: string; count: number }[]; fill: (i: number) => string; unit: string }) {
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const plotH = 160;
  const colW = (CHART_W - 40) / buckets.length;
  return (
    <ChartSvg id={id} height={plotH + 44}>
      <line x1={20} x2={CHART_W - 20} y1={plotH + 16} y2={plotH + 16} class="chart-axis" />
      {buckets.map((b, i) => {
        const h = (b.count / max) * plotH;
        const x = 20 + i * colW + 6;
        return (
          <g key={b.label}>
            <title>{`${b.label}: ${b.count} ${unit}`}</title>
            <rect x={x} y={plotH + 16 - h} width={colW - 12} height={h} fill={fill(i)} />
            <text x={x + (colW - 12) / 2} y={plotH + 12 - h} text-anchor="middle" class="chart-value">
              {b.count}
            </text>
            <text x={x + (colW - 12) / 2} y={plotH + 32} text-anchor="middle" class="chart-label">
              {b.label}
            </text>
          </g>
        );
      })}
    </ChartSvg>
  );
}
