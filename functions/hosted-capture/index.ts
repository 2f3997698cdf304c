/**
 * /functions/v1/hosted-capture: the screen the service hosts for a hosted session, where a person
 * proves presence in their own browser. Its JSON endpoints (boot, complete, cancel) are api.ts; its
 * pages and static assets (the device check page, the browser client, models, .wasm) are page.ts.
 */
import { createFunctionApp } from "../../shared/edge/app";
import { mountScreenApi } from "./api";
import { mountPages } from "./page";

const app = createFunctionApp("hosted-capture");
mountScreenApi(app);
mountPages(app);

export default app;
