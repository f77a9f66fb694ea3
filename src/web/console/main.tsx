import "leaflet/dist/leaflet.css";
import "../shared/base.css";
import "./console.css";
import "./views.css";
import "./report.css";
import { render } from "preact";
import { Shell } from "../shared/shell";
import { ConsoleApp } from "./app";

render(
  <Shell app="console" title="Dispatch console" roles={["dispatcher", "watcher"]}>
    {(_session, api, logout) => <ConsoleApp api={api} logout={logout} />}
  </Shell>,
  document.getElementById("app")!,
);
