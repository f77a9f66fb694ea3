import "../shared/base.css";
import "./driver.css";
import { render } from "preact";
import { Shell } from "../shared/shell";
import { DriverApp } from "./app";
import { registerShellWorker } from "./pwa";

render(
  <Shell app="driver" title="Driver" roles={["driver"]}>
    {(session, api, logout) => <DriverApp api={api} driverId={session.userId} logout={logout} />}
  </Shell>,
  document.getElementById("app")!,
);
registerShellWorker();
