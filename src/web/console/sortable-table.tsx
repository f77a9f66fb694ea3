/** A table whose column headers sort it (the report's figures behind its charts). */
import { useMemo, useState } from "preact/hooks";

export interface Column<T> {
  label: string;
  /** What the column sorts by (and shows, unless `show`). */
  value: (row: T) => string | number;
  show?: (row: T) => string;
}

/** A table whose column headers sort it (again: the other way); `aria-sort` tells screen readers. The first column heads its row. */
export function SortableTable<T>({ caption, rows, columns, rowKey }: { caption: string; rows: T[]; columns: Column<T>[]; rowKey: (row: T) => string | number }) {
  const [sort, setSort] = useState<{ col: number; dir: 1 | -1 } | null>(null);
  const sorted = useMemo(() => {
    if (!sort) return rows;
    const { col, dir } = sort;
    const value = columns[col].value;
    return [...rows].sort((a, b) => {
      const x = value(a), y = value(b);
      return (typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y))) * dir;
    });
  }, [rows, columns, sort]);
  return (
    <div class="table-scroll">
      <table class="report-table">
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th scope="col" aria-sort={sort?.col === i ? (sort.dir === 1 ? "ascending" : "descending") : "none"}>
                <button type="button" class="link" onClick={() => setSort((s) => ({ col: i, dir: s?.col === i && s.dir === 1 ? -1 : 1 }))}>
                  {c.label}
                  <span aria-hidden="true">{sort?.col === i ? (sort.dir === 1 ? " ▲" : " ▼") : ""}</span>
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {sorted.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((c, i) => {
                const text = c.show ? c.show(row) : String(c.value(row));
                return i === 0 ? <th scope="row">{text}</th> : <td>{text}</td>;
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
