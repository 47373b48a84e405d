;;; shown-story.el --- tether-render-shown of many texts in `emacs --batch'  -*- lexical-binding: t; -*-

;; Environment: TETHER_EL_DIR (editors/emacs), TETHER_TEXTS (a file: a JSON list of
;; strings), TETHER_RESULT (where the JSON report goes): each text with its line breaks
;; kept and on one line.

(require 'json)
(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(require 'tether-render)

(let ((texts (let ((json-array-type 'list))  ; json.el: a NUL is a character like any
               (json-read-from-string (with-temp-buffer
                                        (let ((coding-system-for-read 'utf-8))
                                          (insert-file-contents (getenv "TETHER_TEXTS")))
                                        (buffer-string))))))
  (with-temp-file (getenv "TETHER_RESULT")
    (set-buffer-file-coding-system 'utf-8)
    (insert (json-encode `((lines . ,(vconcat (mapcar #'tether-render-shown texts)))
                           (oneLine . ,(vconcat (mapcar (lambda (text)
                                                          (tether-render-shown text t))
                                                        texts)))))))
  (kill-emacs 0))
