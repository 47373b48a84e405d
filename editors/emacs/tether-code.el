;;; tether-code.el --- The agent's code tools answered by Eglot  -*- lexical-binding: t; -*-

;;; Commentary:

;; `agent/code': the model's `definition', `references', `hover' and `symbols' tools are
;; answered by the Eglot server managing the file, so that Tether does not start a second
;; language server next to it.  A file no buffer visits is visited (in the background, as
;; `find-file-noselect' does: Eglot manages it when it runs for that project and major mode).
;; Positions come in Tether's encoding (characters: utf-32) and are converted with Eglot's
;; own column functions, both ways.  No Eglot server for the file, or one that fails or does
;; not answer within `tether-code-timeout' seconds: `(:unavailable REASON)', and Tether asks
;; its own language servers.  Declared to the server only when Eglot is available.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'seq)
(require 'subr-x)

(declare-function eglot-current-server "eglot" ())
(declare-function eglot--server-capable "eglot" (&rest feats))
(declare-function eglot--server-info "eglot" (server))
(declare-function eglot--pos-to-lsp-position "eglot" (&optional pos))
(declare-function eglot--lsp-position-to-point "eglot" (pos-plist &optional marker))
(declare-function eglot--signal-textDocument/didChange "eglot" ())
(declare-function tether--file "tether" (uri))
(declare-function tether--point "tether" (position))
(declare-function tether--position "tether" (point))

(defcustom tether-code-timeout 20
  "Seconds the Eglot server may take to answer one of the agent's code questions."
  :type 'number
  :group 'tether)

(defconst tether-code--methods
  '(("definition" . :textDocument/definition)
    ("references" . :textDocument/references)
    ("hover" . :textDocument/hover)
    ("documentSymbols" . :textDocument/documentSymbol)
    ("workspaceSymbols" . :workspace/symbol)
    ("rename" . :textDocument/rename))
  "Each `agent/code' request and the LSP method that answers it.")

(defconst tether-code--capabilities
  '(("definition" . :definitionProvider)
    ("references" . :referencesProvider)
    ("hover" . :hoverProvider)
    ("documentSymbols" . :documentSymbolProvider)
    ("workspaceSymbols" . :workspaceSymbolProvider)
    ("rename" . :renameProvider))
  "Each request and the server capability it needs.")

(defun tether-code-available-p ()
  "Whether Eglot can be used to answer `agent/code'."
  (or (featurep 'eglot) (locate-library "eglot")))

(defun tether-code--server-name (server)
  "What SERVER is called in the tool's result."
  (or (ignore-errors (plist-get (eglot--server-info server) :name)) "Eglot"))

(defun tether-code--buffer (uri)
  "The buffer visiting URI's file, visited in the background when none does."
  (let ((file (tether--file uri)))
    (or (find-buffer-visiting file)
        (and (file-readable-p file)
             ;; In the background: no question about a file's unsafe local variables.
             (let ((enable-local-variables :safe))
               (find-file-noselect file))))))

(defun tether-code--eglot-buffer ()
  "Some buffer an Eglot server manages (for a workspace's symbols), or nil."
  (seq-find (lambda (buffer)
              (with-current-buffer buffer
                (and buffer-file-name (fboundp 'eglot-current-server) (eglot-current-server))))
            (buffer-list)))

(defun tether-code--line-buffer (uri)
  "The buffer visiting URI's file, or nil."
  (and (stringp uri) (string-prefix-p "file://" uri)
       (find-buffer-visiting (tether--file uri))))

(defun tether-code--from-eglot (uri position)
  "POSITION (Eglot's server's encoding) of URI in Tether's encoding."
  (let ((buffer (tether-code--line-buffer uri)))
    (if (not buffer)
        (if (file-readable-p (tether--file uri))
            (with-temp-buffer
              (insert-file-contents (tether--file uri))
              (tether--position (eglot--lsp-position-to-point position)))
          position)
      (with-current-buffer buffer
        (save-restriction
          (widen)
          (tether--position (eglot--lsp-position-to-point position)))))))

(defun tether-code--range (uri range)
  "RANGE of URI in Tether's encoding."
  (list :start (tether-code--from-eglot uri (plist-get range :start))
        :end (tether-code--from-eglot uri (plist-get range :end))))

(defun tether-code--locations (result)
  "A `Location', `Location[]' or `LocationLink[]' RESULT as `{uri, range}'s."
  (let ((items (cond ((null result) nil)
                     ((and (listp result) (keywordp (car result))) (list result))
                     (t (append result nil)))))
    (vconcat
     (delq nil
           (mapcar (lambda (item)
                     (let ((uri (or (plist-get item :targetUri) (plist-get item :uri)))
                           (range (or (plist-get item :targetSelectionRange)
                                      (plist-get item :range))))
                       (and (stringp uri) range
                            (list :uri uri :range (tether-code--range uri range)))))
                   items)))))

(defun tether-code--hover (result)
  "A hover RESULT's text."
  (let* ((contents (plist-get result :contents))
         (parts (cond ((null contents) nil)
                      ((stringp contents) (list contents))
                      ((and (listp contents) (keywordp (car contents))) (list contents))
                      (t (append contents nil)))))
    (string-join
     (delq nil (mapcar (lambda (part)
                         (let ((text (if (stringp part) part (plist-get part :value))))
                           (and (stringp text) (not (string-empty-p text)) text)))
                       parts))
     "\n\n")))

(defun tether-code--symbols (result uri)
  "Document, workspace symbols or symbol information RESULT as symbols.
Document symbols are of URI."
  (let (out)
    (cl-labels
        ((walk (item depth container)
           (let* ((location (plist-get item :location))
                  (where (if (plist-get item :selectionRange) uri (plist-get location :uri)))
                  (range (or (plist-get item :selectionRange) (plist-get location :range)
                             '(:start (:line 0 :character 0) :end (:line 0 :character 0))))
                  (kind (plist-get item :kind)))
             (when (and (stringp where) (stringp (plist-get item :name)))
               (push (append (list :name (plist-get item :name)
                                   :kind (if (and (integerp kind) (<= 1 kind 26)) kind 13)
                                   :location (list :uri where
                                                   :range (tether-code--range where range))
                                   :depth depth)
                             (let ((in (or (plist-get item :containerName) container)))
                               (and (stringp in) (list :containerName in))))
                     out)
               (seq-doseq (child (or (plist-get item :children) []))
                 (walk child (1+ depth) (plist-get item :name)))))))
      (seq-doseq (item (or result []))
        (walk item 0 nil)))
    (vconcat (nreverse out))))

(defun tether-code--changes (result)
  "A rename's `WorkspaceEdit' RESULT as text edits by URI; nil if it touches files."
  (let ((out (make-hash-table :test #'equal))
        (touches-files nil))
    (cl-flet ((add (uri edits)
                (puthash uri
                         (vconcat (gethash uri out)
                                  (mapcar (lambda (edit)
                                            (list :range (tether-code--range
                                                          uri (plist-get edit :range))
                                                  :newText (plist-get edit :newText)))
                                          edits))
                         out)))
      (if (> (length (plist-get result :documentChanges)) 0)
          (seq-doseq (change (plist-get result :documentChanges))
            (if (plist-get change :kind)
                (setq touches-files t)
              (add (plist-get (plist-get change :textDocument) :uri)
                   (plist-get change :edits))))
        (let ((changes (plist-get result :changes)))
          (while changes
            (add (substring (symbol-name (car changes)) 1) (cadr changes))
            (setq changes (cddr changes))))))
    (unless touches-files out)))

(defun tether-code--ask (server method params)
  "PARAMS' METHOD asked of Eglot's SERVER: (ok . result), or (nil . why)."
  (condition-case err
      (cons t (jsonrpc-request server method params :timeout tether-code-timeout))
    (error (cons nil (format "%s: %s" (tether-code--server-name server)
                             (error-message-string err))))))

(defun tether-code-answer (params)
  "The answer to an `agent/code' request PARAMS (a plist)."
  (let* ((kind (plist-get params :request))
         (method (cdr (assoc kind tether-code--methods)))
         (uri (plist-get params :uri))
         (buffer (if (equal kind "workspaceSymbols")
                     (tether-code--eglot-buffer)
                   (and (stringp uri) (tether-code--buffer uri))))
         (server (and buffer
                      (with-current-buffer buffer
                        (and (fboundp 'eglot-current-server) (eglot-current-server))))))
    (cond
     ((not method) (list :unavailable (format "Emacs does not answer %s" kind)))
     ((not server)
      (list :unavailable
            (format "no Eglot server manages %s"
                    (if uri (file-name-nondirectory (tether--file uri)) "this workspace"))))
     ((not (with-current-buffer buffer
             (eglot--server-capable (cdr (assoc kind tether-code--capabilities)))))
      (list :unavailable (format "%s does not answer %s" (tether-code--server-name server)
                                 method)))
     (t
      (let ((lsp (and uri (list :textDocument (list :uri uri)))))
        (when uri
          (with-current-buffer buffer
            (when (fboundp 'eglot--signal-textDocument/didChange)
              (eglot--signal-textDocument/didChange))  ; the server sees the buffer's text
            (when-let ((position (plist-get params :position)))
              (save-restriction
                (widen)
                (setq lsp (append lsp (list :position (eglot--pos-to-lsp-position
                                                       (tether--point position))))))))
        (pcase kind
          ("references" (setq lsp (append lsp '(:context (:includeDeclaration t)))))
          ("workspaceSymbols" (setq lsp (list :query (or (plist-get params :query) ""))))
          ("rename" (setq lsp (append lsp (list :newName (plist-get params :newName))))))
        (pcase-let ((`(,ok . ,result) (tether-code--ask server method lsp))
                    (name (tether-code--server-name server)))
          (if (not ok)
              (list :unavailable result)
            (pcase kind
              ((or "definition" "references")
               (list :server name :locations (tether-code--locations result)))
              ("hover" (list :server name :hover (tether-code--hover result)))
              ("documentSymbols" (list :server name :symbols (tether-code--symbols result uri)))
              ("workspaceSymbols" (list :server name :symbols (tether-code--symbols result nil)))
              ("rename"
               (let ((changes (tether-code--changes result)))
                 (if changes
                     (list :server name :changes changes)
                   (list :unavailable
                         "the rename would also create, rename or delete a file")))))))))))))

(provide 'tether-code)
;;; tether-code.el ends here
