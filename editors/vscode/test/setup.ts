// Loaded by mocha before any test: `require("vscode")` gets the fake API (there is no VS
// Code here), so modules that import `vscode` can be tested with the UI driven by tests.
import Module from "module";
import * as path from "path";

const fake = path.join(__dirname, "fakeVscode.js");
const withResolve = Module as unknown as {
  _resolveFilename(request: string, ...rest: unknown[]): string;
};
const resolve = withResolve._resolveFilename;
withResolve._resolveFilename = function (request: string, ...rest: unknown[]): string {
  return resolve.call(this, request === "vscode" ? fake : request, ...rest);
};
