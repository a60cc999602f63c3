/** A resource a provider holds under the key (account) that created it: `{kind: 'file', id: 'file-abc'}`. */
export interface ResourceRef {
  kind: string;
  id: string;
}
