/**
 * /functions/v1/hosted-capture: the screen the service hosts for a hosted session, where a person
 * proves presence in their own browser. Its JSON endpoints (boot, complete, cancel) are api.ts.
 */
import { createFunctionApp } from "../../shared/platform/app";
import { mountScreenApi } from "./api";

const app = createFunctionApp("hosted-capture");
mountScreenApi(app);

export default app;
